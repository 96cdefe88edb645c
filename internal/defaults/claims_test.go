package defaults_test

import (
	"reflect"
	"strings"
	"testing"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/classify"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apf/request"
	"github.com/apf-operator/apf-operator/internal/defaults"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/internal/nativeview"
)

// sample is a request that a default FlowSchema matches, with the kube-apiserver FlowSchema and
// level that classify it in kube-apiserver's suggested configuration (without the operator).
type sample struct {
	what                      string
	attrs                     request.Attributes
	nativeSchema, nativeLevel string
}

func resource(user string, groups []string, verb, resource, ns string) request.Attributes {
	return request.Attributes{User: user, Groups: nativeview.Groups(user, groups), Verb: verb, Resource: resource,
		Namespace: ns, ResourceRequest: true}
}

var (
	node       = []string{"system:nodes"}
	admin      = resource("admin", []string{"system:masters"}, "get", "pods", "default")
	heartbeat  = resource("system:node:n1", node, "update", "nodes", "")
	nodeOps    = resource("system:node:n1", node, "get", "configmaps", "kube-system")
	controller = resource("system:controller:foo", nil, "update", "leases", "kube-system")
	gcUser     = resource("system:controller:garbage-collector", nil, "list", "pods", "apps")
	kcm        = resource("system:kube-controller-manager", nil, "delete", "pods", "apps")
	gcAccount  = resource("system:serviceaccount:kube-system:generic-garbage-collector", nil, "delete", "pods", "apps")
	alice      = resource("alice", nil, "get", "pods", "default")
	workloadSA = resource("system:serviceaccount:apps:controller", nil, "list", "pods", "apps")
)

// claims are, by default FlowSchema, samples of its own traffic (the in-process classifier
// picks it for them) and where kube-apiserver sends them.
var claims = map[string][]sample{
	"system-top":    {{"an admin", admin, "exempt", "exempt"}},
	"system-high":   {{"a node heartbeat", heartbeat, "system-node-high", "node-high"}, {"a node in kube-system", nodeOps, "system-nodes", "system"}, {"a system:controller:* user's leader election", controller, "global-default", "global-default"}},
	"system-low":    {{"the proposal's garbage collector user", gcUser, "global-default", "global-default"}},
	"workload-high": {{"an ordinary user", alice, "global-default", "global-default"}},
	"workload-low":  {{"a workload service account", workloadSA, "service-accounts", "workload-low"}, {"an ordinary user", alice, "global-default", "global-default"}},
}

// TestWithheldClaims checks, against kube-apiserver's suggested configuration (the vendored
// bootstrap objects) and k8s.io/apiserver's matching, every claim the defaults make: each
// sample is classified by the default FlowSchema in process, and natively by the schema its
// withheld message names; system-top, the one projected default, goes natively to the level it
// projects onto (exempt), so projecting it moves nothing; every withheld default would move at
// least one sample to another level (its RequestPriority's bound level) or cannot be projected
// exactly at all, which is why it is withheld.
func TestWithheldClaims(t *testing.T) {
	view := nativeview.Bootstrap()
	withheld := defaults.Withheld(defaults.FlowSchemas())
	bound := map[string]string{"system-top": "exempt"}
	for _, rp := range defaults.RequestPriorities() {
		if rp.Spec.NativeLevel != "" {
			bound[rp.Name] = rp.Spec.NativeLevel
		}
	}
	for _, fs := range defaults.FlowSchemas() {
		// The FlowSchema alone: its projection would take every request it matches that no
		// kube-apiserver schema ahead of the projected ones takes, whichever default takes it in
		// process (the other defaults are withheld).
		classifier := classify.Compile(effective.Compute(defaults.RequestPriorities(), []flowv1.FlowSchema{fs}))
		moves := false
		for _, s := range claims[fs.Name] {
			a := s.attrs
			var got classify.Result
			if classifier.Classify(&a, &got); got.Schema.Name != fs.Name {
				t.Errorf("%s: %s is not matched by the FlowSchema in process (%s is)", fs.Name, s.what, got.Schema.Name)
			}
			ans := view.Classify(&a)
			if ans.FlowSchema.Name != s.nativeSchema || ans.PriorityLevel.Name != s.nativeLevel {
				t.Errorf("%s: %s natively %s/%s, want %s/%s", fs.Name, s.what, ans.FlowSchema.Name, ans.PriorityLevel.Name,
					s.nativeSchema, s.nativeLevel)
			}
			if msg := withheld[fs.Name]; msg != "" && !strings.Contains(msg, s.nativeSchema) {
				t.Errorf("%s: withheld message does not name %s: %s", fs.Name, s.nativeSchema, msg)
			}
			moves = moves || s.nativeLevel != bound[fs.Spec.RequestPriority.Name]
		}
		inexpressible := len(native.MatchErrors(&fs.Spec)) > 0
		if _, isWithheld := withheld[fs.Name]; (moves || inexpressible) != isWithheld {
			t.Errorf("%s: projecting it would move a sample: %v; not expressible: %v; withheld: %v", fs.Name, moves,
				inexpressible, isWithheld)
		}
	}
}

// TestBindingsServeTheirClass checks each binding's justification: the level a non-top default
// is bound to is where kube-apiserver's suggested configuration sends the traffic the
// RequestPriority is for.
func TestBindingsServeTheirClass(t *testing.T) {
	view := nativeview.Bootstrap()
	for name, sample := range map[string]request.Attributes{
		"system-high":   heartbeat,  // the proposal's first class of system-high
		"system-low":    kcm,        // the garbage collector runs in kube-controller-manager...
		"workload-high": alice,      // users with kubectl
		"workload-low":  workloadSA, // controllers processing workload
	} {
		rp, _ := defaults.RequestPriority(name)
		if got := view.Classify(&sample).PriorityLevel.Name; got != rp.Spec.NativeLevel {
			t.Errorf("%s is bound to %q, but kube-apiserver serves its class at %q", name, rp.Spec.NativeLevel, got)
		}
	}
	rp, _ := defaults.RequestPriority("system-low") // ...also with its own service account
	if got := view.Classify(&gcAccount).PriorityLevel.Name; got != rp.Spec.NativeLevel {
		t.Errorf("the garbage collector's service account goes to %q, system-low is bound to %q", got, rp.Spec.NativeLevel)
	}
}

// TestDefaultsProjectNothingNew projects the defaults as the operator does (kube-apiserver's
// bootstrap levels present, the owned defaults withheld): no level is written, every
// RequestPriority is projected onto its bound level (system-top onto exempt), only FlowSchema
// system-top is projected, and with --native-unmatched=operator the backstop FlowSchema goes to
// kube-apiserver's workload-low, the level of the logically lowest default.
func TestDefaultsProjectNothingNew(t *testing.T) {
	rps, fss := defaults.RequestPriorities(), defaults.FlowSchemas()
	for _, unmatched := range []native.Unmatched{native.UnmatchedKubeAPIServer, native.UnmatchedOperator} {
		plan := native.Project(effective.Compute(rps, fss), native.Existing{Unmatched: unmatched,
			PriorityLevels: nativeview.BootstrapObjects().PriorityLevels, Withheld: defaults.Withheld(fss)})
		if len(plan.PriorityLevels) != 0 {
			t.Errorf("%s: levels written: %v", unmatched, plan.PriorityLevels)
		}
		for _, rp := range rps {
			want := rp.Spec.NativeLevel
			if want == "" {
				want = "exempt"
			}
			if res := plan.RequestPriorities[rp.Name]; !res.Projected || res.NativeName != want {
				t.Errorf("%s: RequestPriority %s: %+v, want projected onto %s", unmatched, rp.Name, res, want)
			}
		}
		for _, fs := range fss {
			res := plan.FlowSchemaResults[fs.Name]
			if fs.Name == "system-top" != res.Projected || (!res.Projected && res.Reason != flowv1.ReasonShadowedByNative) {
				t.Errorf("%s: FlowSchema %s: %+v", unmatched, fs.Name, res)
			}
		}
		levels := map[string]string{}
		for _, fs := range plan.FlowSchemas {
			levels[fs.Name] = fs.Spec.PriorityLevelConfiguration.Name
		}
		want := map[string]string{native.NativeName("system-top"): "exempt"}
		if unmatched == native.UnmatchedOperator {
			want["apf.non-top-backstop"] = "workload-low"
		}
		if !reflect.DeepEqual(levels, want) {
			t.Errorf("%s: native FlowSchemas -> levels %v, want %v", unmatched, levels, want)
		}
	}
}
