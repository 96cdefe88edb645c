package sidebyside

import "net/http"

// aimedAt returns, for every FlowSchema of the configuration (and the backstops), a generator
// of calls meant for it, with random choices among the values it accepts. Whether each schema
// is reached is checked on the results, not assumed from here.
func (g *generator) aimedAt() []func() call {
	k8s := func(group, resource string) kind {
		for _, k := range kinds {
			if k.group == group && k.resource == resource {
				return k
			}
		}
		panic("no kind " + group + "/" + resource + " in kinds")
	}
	readVerbs := []string{"get", "list", "watch"}
	writeVerbs := []string{"create", "update", "patch", "delete", "deletecollection"}
	return []func() call{
		// system-top (system:masters, ahead of every FlowSchema)
		func() call { return g.any(admin) },
		// system-low
		func() call { return g.any(authenticated("system:controller:garbage-collector")) },
		// workload-low: every resource request no earlier schema takes
		func() call {
			return g.resource(pick(g, plain...), pick(g, resourceVerbs...), pick(g, kinds...), pick(g, namespaces...), "")
		},
		// non-top-backstop: non-resource requests no schema takes, probe paths with other methods too
		func() call {
			return g.nonResource(pick(g, plain...), pick(g, methods...), pick(g, "/metrics", "/api", "/logs/x"))
		},
		func() call {
			return g.nonResource(pick(g, plain...), pick(g, http.MethodPost, http.MethodDelete), pick(g, "/healthz", "/livez"))
		},
		// t-ab
		func() call { return g.any(pick(g, authenticated("alice"), authenticated("bob"))) },
		// t-c-reads
		func() call {
			return g.resource(authenticated("carol"), pick(g, readVerbs...), pick(g, k8s("", "configmaps"), k8s("", "secrets")),
				pick(g, "team-a", ""), "")
		},
		// t-ops-apps
		func() call {
			return g.resource(authenticated("olga", "ops"), pick(g, resourceVerbs...),
				pick(g, k8s("apps", "deployments"), k8s("apps", "statefulsets")), pick(g, namespaces...), pick(g, "", "scale", "status"))
		},
		// t-batch-writers
		func() call {
			return g.resource(pick(g, authenticated("dave"), serviceAccount("team-b", "builder")), pick(g, writeVerbs...),
				pick(g, k8s("batch", "jobs"), k8s("batch", "cronjobs")), "team-b", "")
		},
		// t-apis
		func() call {
			return g.nonResource(authenticated("erin"), pick(g, methods...), pick(g, "/apis/apps/v1", "/apis/batch/v1", "/apis/x/y"))
		},
		// t-version
		func() call {
			return g.nonResource(pick(g, authenticated("erin"), authenticated("frank")), pick(g, http.MethodGet, http.MethodPatch),
				pick(g, "/version", "/version/openapi"))
		},
		// t-mixed: reads of any kind, or deletes below /foo/
		func() call {
			return g.resource(authenticated("grace"), pick(g, "get", "list"), pick(g, kinds...), pick(g, namespaces...), "")
		},
		func() call {
			return g.nonResource(authenticated("grace"), http.MethodDelete, pick(g, "/foo/bar", "/foo/a/b"))
		},
		// t-kube-ns
		func() call {
			return g.resource(authenticated("heidi"), pick(g, resourceVerbs...), k8s("", "configmaps"),
				pick(g, "kube-system", "kube-public"), "")
		},
		// t-sa-team
		func() call {
			id := pick(g, serviceAccount("team-a", "deployer"), serviceAccount("team-a", "viewer"))
			return g.resource(id, pick(g, "get", "list", "watch", "create", "update", "patch"), pick(g, kinds...),
				pick(g, namespaces...), pick(g, subresources...))
		},
		// t-authn-get-deploy
		func() call {
			id := pick(g, authenticated("zed"), authenticated("frank"), serviceAccount("team-c", "default"))
			return g.resource(id, "get", k8s("apps", "deployments"), pick(g, namespaces...), "")
		},
		// t-anon-openapi
		func() call {
			return g.nonResource(anonymous, http.MethodGet, pick(g, "/openapi/v2", "/openapi/v3/apis/apps/v1"))
		},
		// t-leader
		func() call {
			id := pick(g, authenticated("system:controller:foo"), authenticated("system:controller:bar"))
			return g.resource(id, pick(g, "get", "create", "update"), k8s("coordination.k8s.io", "leases"),
				pick(g, "team-a", "kube-system"), "")
		},
		// t-developers
		func() call { return g.any(authenticated("dev", "developers")) },
		// t-ops-exempt
		func() call { return g.any(authenticated("ops-admin")) },
		// t-trent-get and t-trent
		func() call {
			return g.resource(authenticated("trent"), "get", pick(g, kinds...), pick(g, namespaces...), "")
		},
		func() call { return g.any(authenticated("trent")) },
		// t-late: its non-resource requests (workload-low takes its resource requests first)
		func() call {
			return g.nonResource(serviceAccount("late", "sa"), pick(g, methods...), pick(g, paths...))
		},
	}
}
