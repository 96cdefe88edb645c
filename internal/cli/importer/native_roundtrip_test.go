package importer

import (
	"slices"
	"strings"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apf/request"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/internal/native/nativetest"
	"github.com/apf-operator/apf-operator/internal/nativeview/bootstrapset"
)

// nativeRoundTrip is the round-trip property on a native configuration: X is the inputs
// beside kube-apiserver's bootstrap objects of set (what a cluster of that version holds with
// the inputs applied). It imports the inputs (references to levels they lack bind to set's),
// checks the manifests with `validate --target native`, projects them onto set's objects (the
// inputs removed, as after a move under the operator) and asks kube-apiserver's own controller
// which level each request of the corpus gets, before and after. It returns the number of
// requests compared; any difference fails the test.
func nativeRoundTrip(t *testing.T, in *Input, set *bootstrapset.Set, opts Options) int {
	t.Helper()
	opts.Existing = ExistingLevels("the bootstrap set", set.PriorityLevels())
	res := Import(in, opts)
	if len(res.Problems) > 0 || len(res.Unenforced) > 0 {
		t.Fatalf("import: problems %q, not enforced %q", res.Problems, res.Unenforced)
	}
	rps, fss := reloadNative(t, res)
	base := setInput(set)
	plan := native.Project(effective.Compute(rps, fss), native.Existing{PriorityLevels: base.PriorityLevels,
		FlowSchemas: base.FlowSchemas})
	for i := range fss {
		if r := plan.FlowSchemaResults[fss[i].Name]; !r.Projected {
			t.Fatalf("FlowSchema %s not projected: %s: %s", fss[i].Name, r.Reason, r.Message)
		}
	}
	before := withBase(in, base)
	after := &Input{PriorityLevels: append(base.PriorityLevels, plan.PriorityLevels...),
		FlowSchemas: append(base.FlowSchemas, plan.FlowSchemas...)}
	kBefore := nativetest.Start(t, before.PriorityLevels, before.FlowSchemas)
	defer kBefore.Close()
	kAfter := nativetest.Start(t, after.PriorityLevels, after.FlowSchemas)
	defer kAfter.Close()
	levelBefore, levelAfter := levelsOf(before.FlowSchemas), levelsOf(after.FlowSchemas)
	boundTo := boundLevels(rps)
	corpus := append(requestCorpus(corpusSize), subjectRequests(in.FlowSchemas)...)
	mismatches := 0
	for i := range corpus {
		a := &corpus[i]
		want := levelBefore[kBefore.Pick(a)]
		got := originalLevel(levelAfter[kAfter.Pick(a)], boundTo)
		if got != want {
			if mismatches++; mismatches <= 5 {
				t.Errorf("request %+v: level %q after the import, %q before", *a, got, want)
			}
		}
	}
	if mismatches > 0 {
		t.Fatalf("%d of %d requests change level", mismatches, len(corpus))
	}
	return len(corpus)
}

// reloadNative prints the result, checks it with `validate --target native` at the default
// budget and reads it back.
func reloadNative(t *testing.T, res *Result) ([]flowv1.RequestPriority, []flowv1.FlowSchema) {
	t.Helper()
	return reloadFor(t, res, "native")
}

// setInput is a bootstrap set as an Input.
func setInput(set *bootstrapset.Set) *Input {
	return &Input{PriorityLevels: set.PriorityLevels(), FlowSchemas: set.FlowSchemas()}
}

// withBase is in beside base's objects of other names.
func withBase(in, base *Input) *Input {
	out := &Input{PriorityLevels: slices.Clone(in.PriorityLevels), FlowSchemas: slices.Clone(in.FlowSchemas)}
	for _, l := range base.PriorityLevels {
		if !slices.ContainsFunc(in.PriorityLevels, func(x flowcontrolv1.PriorityLevelConfiguration) bool { return x.Name == l.Name }) {
			out.PriorityLevels = append(out.PriorityLevels, l)
		}
	}
	for _, fs := range base.FlowSchemas {
		if !slices.ContainsFunc(in.FlowSchemas, func(x flowcontrolv1.FlowSchema) bool { return x.Name == fs.Name }) {
			out.FlowSchemas = append(out.FlowSchemas, fs)
		}
	}
	return out
}

// levelsOf maps FlowSchema names to their level, catch-all included.
func levelsOf(schemas []flowcontrolv1.FlowSchema) map[string]string {
	out := map[string]string{flowcontrolv1.FlowSchemaNameCatchAll: flowcontrolv1.PriorityLevelConfigurationNameCatchAll}
	for _, fs := range schemas {
		out[fs.Name] = fs.Spec.PriorityLevelConfiguration.Name
	}
	return out
}

// boundLevels maps the RequestPriority names bound to a native level to that level.
func boundLevels(rps []flowv1.RequestPriority) map[string]string {
	out := map[string]string{}
	for _, rp := range rps {
		if rp.Spec.NativeLevel != "" {
			out[rp.Name] = rp.Spec.NativeLevel
		}
	}
	return out
}

// originalLevel is the native level a level of the projection stands for: the level the
// operator wrote for RequestPriority X (apf-X) stands for X's native original, or for the
// level X is bound to (a projection that writes no level for a bound RequestPriority refers
// to that level directly).
func originalLevel(name string, boundTo map[string]string) string {
	rp, projected := strings.CutPrefix(name, "apf-")
	if !projected {
		return name
	}
	if level, ok := boundTo[rp]; ok {
		return level
	}
	return rp
}

// subjectRequests are requests by the subjects the FlowSchemas name (a service account of a
// namespace wildcard gets a made-up name), each with a few verbs and resources and a
// non-resource path, so that the corpus exercises every schema.
func subjectRequests(schemas []flowcontrolv1.FlowSchema) []request.Attributes {
	var users [][2]string // user, extra group
	for _, fs := range schemas {
		for _, rule := range fs.Spec.Rules {
			for _, s := range rule.Subjects {
				switch {
				case s.User != nil:
					users = append(users, [2]string{s.User.Name, ""})
				case s.Group != nil:
					users = append(users, [2]string{"member-of-" + s.Group.Name, s.Group.Name})
				case s.ServiceAccount != nil:
					name := s.ServiceAccount.Name
					if name == flowcontrolv1.NameAll {
						name = "any-sa"
					}
					users = append(users, [2]string{serviceaccount.MakeUsername(s.ServiceAccount.Namespace, name), ""})
				}
			}
		}
	}
	var out []request.Attributes
	for _, u := range users {
		groups := append(baseGroups(u[0]), u[1])
		if ns, _, err := serviceaccount.SplitUsername(u[0]); err == nil {
			groups = append(groups, serviceaccount.AllServiceAccountsGroup, serviceaccount.MakeNamespaceGroupName(ns))
		}
		groups = slices.DeleteFunc(groups, func(g string) bool { return g == "" })
		for _, verb := range []string{"get", "list", "create", "update"} {
			for _, pair := range append(corpusPairs, [2]string{"", "events"}, [2]string{"storagemigration.k8s.io", "storageversionmigrations"}) {
				for _, ns := range []string{"", "default", "kube-system", "openshift-etcd"} {
					out = append(out, request.Attributes{User: u[0], Groups: groups, ResourceRequest: true, Verb: verb,
						APIGroup: pair[0], Resource: pair[1], Namespace: ns})
				}
			}
		}
		for _, path := range []string{"/healthz", "/readyz", "/livez", "/metrics", "/api", "/version"} {
			out = append(out, request.Attributes{User: u[0], Groups: groups, Verb: "get", Path: path})
		}
	}
	return out
}
