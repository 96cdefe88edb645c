package nativeview

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apf/request"
	"github.com/apf-operator/apf-operator/internal/defaults"
	"github.com/apf-operator/apf-operator/internal/native"
)

func TestGroups(t *testing.T) {
	cases := []struct {
		user   string
		groups []string
		want   []string
	}{
		{"alice", nil, []string{"system:authenticated"}},
		{"alice", []string{"team-a"}, []string{"team-a", "system:authenticated"}},
		{"alice", []string{"system:authenticated", "x"}, []string{"system:authenticated", "x"}},
		{"alice", []string{"system:unauthenticated"}, []string{"system:unauthenticated"}},
		{"system:serviceaccount:ns1:sa", nil,
			[]string{"system:serviceaccounts", "system:serviceaccounts:ns1", "system:authenticated"}},
		// Explicit groups are the authority, as for kube-apiserver's impersonation.
		{"system:serviceaccount:ns1:sa", []string{"g"}, []string{"g", "system:authenticated"}},
		// Not a valid service account name: an ordinary user.
		{"system:serviceaccount:ns1:a:b", nil, []string{"system:authenticated"}},
		{"system:anonymous", nil, []string{"system:unauthenticated"}},
	}
	for _, c := range cases {
		if got := Groups(c.user, c.groups); !slices.Equal(got, c.want) {
			t.Errorf("Groups(%q, %q) = %q, want %q", c.user, c.groups, got, c.want)
		}
	}
}

func attrs(user string, groups []string, verb, resource, ns string) *request.Attributes {
	return &request.Attributes{User: user, Groups: Groups(user, groups), Verb: verb, Resource: resource,
		Namespace: ns, ResourceRequest: true}
}

// TestBootstrapClassify checks kube-apiserver's suggested configuration's classes, and the
// nominal seats it gives them with its default limit of 600 seats over 245 shares.
func TestBootstrapClassify(t *testing.T) {
	v := Bootstrap()
	cases := []struct {
		a             *request.Attributes
		schema, level string
		seats         int64 // 0: exempt (no seats)
		distinguisher string
	}{
		{attrs("system:serviceaccount:a:b", nil, "get", "pods", "a"), "service-accounts", "workload-low", 245, "system:serviceaccount:a:b"},
		{attrs("alice", nil, "list", "pods", "a"), "global-default", "global-default", 49, "alice"},
		{attrs("root", []string{"system:masters"}, "delete", "pods", "a"), "exempt", "exempt", 0, ""},
		{attrs("system:node:n1", []string{"system:nodes"}, "update", "nodes", ""), "system-node-high", "node-high", 98, "system:node:n1"},
		{&request.Attributes{User: "x", Groups: Groups("x", nil), Verb: "get", Path: "/healthz"}, "probes", "exempt", 0, ""},
	}
	for _, c := range cases {
		got := v.Classify(c.a)
		if !got.Classified || got.FlowSchema.Name != c.schema || got.PriorityLevel.Name != c.level || got.Distinguisher != c.distinguisher {
			t.Errorf("%+v: got %+v, want %s/%s distinguished by %q", *c.a, got, c.schema, c.level, c.distinguisher)
			continue
		}
		if c.seats == 0 {
			if !got.Exempt {
				t.Errorf("%+v: level %s not exempt", *c.a, c.level)
			}
			continue
		}
		if got.NominalSeats == nil || *got.NominalSeats != c.seats {
			t.Errorf("%+v: nominal seats %v, want %d", *c.a, got.NominalSeats, c.seats)
		}
	}
	if got := v.Classify(attrs("u", nil, "get", "pods", "a")); got.ServerSeats != DefaultServerSeats {
		t.Errorf("server seats %d", got.ServerSeats)
	}
	logs := &request.Attributes{User: "u", Groups: Groups("u", nil), Verb: "get", Resource: "pods", Subresource: "exec", ResourceRequest: true}
	if got := v.Classify(logs); got.Classified {
		t.Errorf("exec must be unclassified: %+v", got)
	}
}

// TestNewLikeKubeAPIServer checks that a schema whose level is missing is ignored, that the
// mandatory objects are supplied when absent, and that ties are broken by name.
func TestNewLikeKubeAPIServer(t *testing.T) {
	everyone := func(name string, prec int32, level string) flowcontrolv1.FlowSchema {
		fs := flowcontrolv1.FlowSchema{}
		fs.Name, fs.UID = name, "uid-"+"name"
		fs.Spec.MatchingPrecedence = prec
		fs.Spec.PriorityLevelConfiguration.Name = level
		fs.Spec.Rules = []flowcontrolv1.PolicyRulesWithSubjects{{
			Subjects: []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindGroup, Group: &flowcontrolv1.GroupSubject{Name: "*"}}},
			ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"},
				Namespaces: []string{"*"}, ClusterScope: true}}}}
		return fs
	}
	level := flowcontrolv1.PriorityLevelConfiguration{}
	level.Name = "l"
	level.Spec.Type = flowcontrolv1.PriorityLevelEnablementLimited
	level.Spec.Limited = &flowcontrolv1.LimitedPriorityLevelConfiguration{}
	v := New("test", []flowcontrolv1.FlowSchema{everyone("b", 10, "l"), everyone("a", 10, "l"), everyone("dangling", 5, "missing")},
		[]flowcontrolv1.PriorityLevelConfiguration{level}, 100)
	got := v.Classify(attrs("u", nil, "get", "pods", "n"))
	if got.FlowSchema.Name != "a" || got.PriorityLevel.Name != "l" {
		t.Fatalf("got %+v, want a (ties by name; the dangling schema ignored)", got)
	}
	// Shares: l 30 (default), exempt 0, catch-all 5 (supplied): ceil(100*30/35) = 86.
	if got.NominalSeats == nil || *got.NominalSeats != 86 {
		t.Errorf("nominal seats %v, want 86", got.NominalSeats)
	}
	if got := v.Classify(attrs("root", []string{"system:masters"}, "get", "pods", "n")); got.FlowSchema.Name != "exempt" || !got.Exempt {
		t.Errorf("the mandatory exempt schema is not supplied: %+v", got)
	}
	empty := New("none", nil, nil, 0)
	if got := empty.Classify(attrs("u", nil, "get", "pods", "n")); got.FlowSchema.Name != "catch-all" || got.NominalSeats != nil {
		t.Errorf("empty view: %+v, want catch-all with unknown seats", got)
	}
	if got := empty.Classify(&request.Attributes{User: "u", Verb: "get", Path: "/x"}); !got.Fallback || got.FlowSchema.Name != "catch-all" {
		t.Errorf("no groups at all: %+v, want the fallback to catch-all", got)
	}
}

// TestWithMetrics reads the seats of kube-apiserver's APF controller at a server limit of 598
// (internal/apfmetrics' fixture): the limit is the one it used, not 600, although the nominal
// seats are the same; a text without the upper limits gives the reported seats only.
func TestWithMetrics(t *testing.T) {
	raw, err := os.ReadFile("../apfmetrics/testdata/bootstrap-598.metrics")
	if err != nil {
		t.Fatal(err)
	}
	v := Bootstrap().WithMetrics(raw)
	if v.SeatsError != nil || v.ServerSeats() != 598 {
		t.Fatalf("server seats %d, error %v; want 598", v.ServerSeats(), v.SeatsError)
	}
	for level, want := range map[string]int64{"global-default": 49, "workload-low": 245, "catch-all": 13, "exempt": 0} {
		if got := v.NominalSeats(level); got == nil || *got != want {
			t.Errorf("%s: nominal seats %v, want %d", level, got, want)
		}
	}
	var nominalOnly bytes.Buffer
	for _, line := range strings.SplitAfter(string(raw), "\n") {
		if strings.HasPrefix(line, "apiserver_flowcontrol_nominal_limit_seats{") {
			nominalOnly.WriteString(line)
		}
	}
	noLimit := Bootstrap().WithMetrics(nominalOnly.Bytes())
	if noLimit.SeatsError == nil || noLimit.ServerSeats() != 0 {
		t.Errorf("without upper limits: server seats %d, error %v; want unknown, saying why", noLimit.ServerSeats(), noLimit.SeatsError)
	}
	if got := noLimit.NominalSeats("workload-low"); got == nil || *got != 245 {
		t.Errorf("without upper limits: workload-low's reported seats %v, want 245", got)
	}
	if none := Bootstrap().WithMetrics([]byte("apiserver_request_total 1\n")); none.SeatsError == nil || none.NominalSeats("global-default") != nil {
		t.Errorf("metrics without seats: error %v, seats %v; want an error and unknown seats", none.SeatsError, none.NominalSeats("global-default"))
	}
}

// TestWithProjection checks that the projection of the defaults and a tenant level replaces
// the operator's objects and takes the requests it should.
func TestWithProjection(t *testing.T) {
	cfg := effective.Compute(defaults.RequestPriorities(), defaults.FlowSchemas())
	v, plan := Bootstrap().WithProjection(cfg, native.Existing{})
	if len(plan.FlowSchemas) == 0 {
		t.Fatal("the defaults project no FlowSchema")
	}
	var projected int
	for _, fs := range v.FlowSchemas() {
		if native.Owned(&fs) {
			projected++
		}
	}
	if projected != len(plan.FlowSchemas) {
		t.Errorf("%d owned FlowSchemas in the view, %d in the plan", projected, len(plan.FlowSchemas))
	}
	// The masters keep kube-apiserver's exempt schema ahead of every projected one.
	if got := v.Classify(attrs("root", []string{"system:masters"}, "get", "pods", "a")); got.FlowSchema.Name != "exempt" {
		t.Errorf("masters: %+v", got)
	}
	// Projecting an empty configuration removes every owned object again.
	again, _ := v.WithProjection(effective.Compute(nil, nil), native.Existing{})
	for _, fs := range again.FlowSchemas() {
		if native.Owned(&fs) && fs.Name != native.NativeName("non-top-backstop") {
			t.Errorf("owned %s survives a projection of nothing", fs.Name)
		}
	}
}

// TestWithProjectionKeepsUIDs checks that a projected object that exists in the view keeps
// its UID (what kube-apiserver's headers carry), and that the operator's objects the projection
// drops are gone.
func TestWithProjectionKeepsUIDs(t *testing.T) {
	cfg := effective.Compute(defaults.RequestPriorities(), defaults.FlowSchemas())
	first, plan := Bootstrap().WithProjection(cfg, native.Existing{})
	schemas := first.FlowSchemas()
	levels := first.PriorityLevels()
	for i := range schemas {
		schemas[i].UID = types.UID("uid-" + schemas[i].Name)
	}
	stale := schemas[0].DeepCopy()
	stale.Name, stale.UID = "apf-gone", "uid-gone"
	stale.Annotations = plan.FlowSchemas[0].Annotations
	stale.Labels = plan.FlowSchemas[0].Labels
	live := New(OriginCluster, append(schemas, *stale), levels, 600)
	again, _ := live.WithProjection(cfg, native.Existing{})
	got := map[string]types.UID{}
	for _, fs := range again.FlowSchemas() {
		got[fs.Name] = fs.UID
	}
	for _, fs := range plan.FlowSchemas {
		if got[fs.Name] != types.UID("uid-"+fs.Name) {
			t.Errorf("%s: UID %q, want the live object's", fs.Name, got[fs.Name])
		}
	}
	if _, ok := got["apf-gone"]; ok {
		t.Error("an owned FlowSchema the projection does not make survives")
	}
}
