package replay

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"time"
)

// synthUser is a user of the synthetic audit log.
type synthUser struct {
	name       string
	groups     []string
	namespaces []string
	weight     int
}

// synthUsers is a cluster's mix: controllers, nodes, service accounts of several namespaces,
// tenants, Argo CD, and an administrator.
func synthUsers() []synthUser {
	auth := "system:authenticated"
	users := []synthUser{
		{name: "system:kube-controller-manager", groups: []string{auth}, weight: 40},
		{name: "system:kube-scheduler", groups: []string{auth}, weight: 20},
		{name: "system:serviceaccount:argocd:argocd-application-controller",
			groups: []string{"system:serviceaccounts", "system:serviceaccounts:argocd", auth}, namespaces: []string{"shop", "web", "argocd"}, weight: 60},
		{name: "admin", groups: []string{"system:masters", auth}, weight: 5},
	}
	for i := range 40 {
		users = append(users, synthUser{name: fmt.Sprintf("system:node:node-%02d", i), groups: []string{"system:nodes", auth},
			namespaces: []string{"kube-system", "shop", "web"}, weight: 3})
	}
	for i := range 100 {
		ns := fmt.Sprintf("tenant-%02d", i%30)
		users = append(users, synthUser{name: fmt.Sprintf("system:serviceaccount:%s:app-%d", ns, i),
			groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, auth}, namespaces: []string{ns}, weight: 2})
		users = append(users, synthUser{name: fmt.Sprintf("dev-%d@example.com", i), groups: []string{"tenants", auth},
			namespaces: []string{ns, "shared"}, weight: 1})
	}
	return users
}

var synthResources = []struct{ group, resource, sub string }{
	{"", "pods", ""}, {"", "pods", "status"}, {"", "configmaps", ""}, {"", "secrets", ""}, {"", "services", ""},
	{"apps", "deployments", ""}, {"apps", "replicasets", ""}, {"coordination.k8s.io", "leases", ""},
	{"argoproj.io", "applications", ""}, {"", "pods", "log"}, {"", "events", ""}, {"", "nodes", ""},
}

var synthVerbs = []string{"get", "get", "get", "list", "list", "watch", "create", "update", "patch", "delete"}

// writeSyntheticLog writes n audit.k8s.io/v1 Event lines at level Metadata, stage
// ResponseComplete, as kube-apiserver writes them, deterministically from seed, over one hour.
func writeSyntheticLog(w io.Writer, n int, seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	users := synthUsers()
	var pick []int
	for i, u := range users {
		for range u.weight {
			pick = append(pick, i)
		}
	}
	start := time.Date(2026, 11, 26, 17, 0, 0, 0, time.UTC)
	bw := bufio.NewWriterSize(w, 1<<20)
	for i := range n {
		u := &users[pick[rng.IntN(len(pick))]]
		at := start.Add(time.Duration(i) * time.Hour / time.Duration(n))
		took := time.Duration(rng.IntN(200_000)) * time.Microsecond
		if _, err := bw.WriteString(syntheticEvent(rng, u, i, at, took)); err != nil {
			return err
		}
	}
	return bw.Flush()
}

func syntheticEvent(rng *rand.Rand, u *synthUser, i int, at time.Time, took time.Duration) string {
	verb := synthVerbs[rng.IntN(len(synthVerbs))]
	groups := `"` + u.groups[0] + `"`
	for _, g := range u.groups[1:] {
		groups += `,"` + g + `"`
	}
	id := fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", i, rng.IntN(1<<16), rng.IntN(1<<12), rng.IntN(1<<12), rng.Int64N(1<<48))
	var uri, objectRef string
	if rng.IntN(20) == 0 {
		verb = "get"
		uri = []string{"/healthz", "/readyz", "/version", "/api", "/apis/apps/v1", "/openapi/v3"}[rng.IntN(6)]
	} else {
		r := synthResources[rng.IntN(len(synthResources))]
		ns := ""
		if len(u.namespaces) > 0 && r.resource != "nodes" {
			ns = u.namespaces[rng.IntN(len(u.namespaces))]
		}
		objectRef = `,"objectRef":{"resource":"` + r.resource + `"`
		uri = "/api/v1"
		if r.group != "" {
			uri = "/apis/" + r.group + "/v1"
			objectRef += `,"apiGroup":"` + r.group + `","apiVersion":"v1"`
		} else {
			objectRef += `,"apiVersion":"v1"`
		}
		if ns != "" {
			objectRef += `,"namespace":"` + ns + `"`
			uri += "/namespaces/" + ns
		}
		uri += "/" + r.resource
		if verb != "list" && verb != "watch" && verb != "create" {
			name := fmt.Sprintf("obj-%d", rng.IntN(50))
			objectRef += `,"name":"` + name + `"`
			uri += "/" + name
		}
		if r.sub != "" {
			objectRef += `,"subresource":"` + r.sub + `"`
			uri += "/" + r.sub
		}
		objectRef += "}"
		if verb == "watch" {
			uri += "?allowWatchBookmarks=true&resourceVersion=12345&watch=true"
		}
	}
	return `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"` + id +
		`","stage":"ResponseComplete","requestURI":"` + uri + `","verb":"` + verb +
		`","user":{"username":"` + u.name + `","uid":"` + fmt.Sprintf("uid-%d", len(u.name)) + `","groups":[` + groups +
		`],"extra":{"authentication.kubernetes.io/credential-id":["JTI=0d4f6c6e-3a8b-4f5e-9d2c-1b7a8e9f0a1b"]}},` +
		`"sourceIPs":["10.0.` + fmt.Sprint(i%250) + `.7"],"userAgent":"kube-controller-manager/v1.36.3 (linux/amd64) kubernetes/abcdef0"` +
		objectRef + `,"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":"` +
		at.Format("2006-01-02T15:04:05.000000Z07:00") + `","stageTimestamp":"` + at.Add(took).Format("2006-01-02T15:04:05.000000Z07:00") +
		`","annotations":{"authorization.k8s.io/decision":"allow","authorization.k8s.io/reason":"RBAC: allowed by ClusterRoleBinding \"x\" of ClusterRole \"y\""}}` + "\n"
}
