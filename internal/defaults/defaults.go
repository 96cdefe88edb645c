package defaults

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

// There is one set of defaults (Set) for every enforcement mode: the objects of the proposal's
// "Example Configuration", with its contradictions resolved as DESIGN.md "Where the proposal
// contradicts itself" decides:
//   - FlowSchema workload-low refers to RequestPriority workload-low (decision 1);
//   - FlowSchema system-low has no flow distinguisher, because its RequestPriority has one
//     queue per width (decision 2);
//   - FlowSchemas workload-high and workload-low distinguish flows by namespace, so each of
//     their conjunctions carries patternMatch {field: resource, pattern: ".*"} and accepts
//     resource requests only (decision 3). For workload-low the proposal's `and: []` has the
//     same contradiction as workload-high and gets the same fix; the non-resource requests it
//     no longer matches go to backstop non-top-backstop, which sits at the same (lowest) level.
//
// With native enforcement the defaults do no harm by binding (DESIGN.md "Defaults" and "Bound
// levels"; docs/configuration.md "Defaults"):
//   - every non-top RequestPriority names, in spec.nativeLevel, the kube-apiserver suggested
//     level that already serves its class of traffic, so it adds no level and no shares (its
//     queuing fields are the proposal's, used by the in-process filter only);
//   - system-top is level 0, projected onto kube-apiserver's mandatory exempt level, and its
//     FlowSchema sends system:masters there, as kube-apiserver's mandatory exempt FlowSchema
//     already does, so it projects and moves nothing;
//   - the four other FlowSchemas are withheld (fsDecl.withheld): projecting any of them would
//     take some requests from the kube-apiserver FlowSchema that classifies them today to
//     another level. Each reports Projected=False, reason ShadowedByNative, naming those
//     FlowSchemas. TestWithheldClaims checks every claim against kube-apiserver's suggested
//     configuration.
//
// Everything below is data: no function here makes a decision.

// rpDecl and fsDecl declare one default object.
type rpDecl struct {
	name string
	spec v1alpha1.RequestPrioritySpec
}

type fsDecl struct {
	name string
	spec v1alpha1.FlowSchemaSpec
	// withheld, when set, is why native enforcement does not project the FlowSchema: the
	// kube-apiserver FlowSchemas that classify its requests first, and what projecting it
	// would move.
	withheld string
}

// The kube-apiserver suggested priority levels the non-top defaults are bound to (see each
// RequestPriority for why).
const (
	nativeNodeHigh      = "node-high"
	nativeWorkloadHigh  = "workload-high"
	nativeGlobalDefault = "global-default"
	nativeWorkloadLow   = "workload-low"
)

// requestPrioritySpecs are the default RequestPriority objects by name, logically highest
// first.
var requestPrioritySpecs = []rpDecl{
	// For requests from admins and requests in service of other, potentially system, requests.
	// Level 0 is kube-apiserver's mandatory exempt level already; it takes no nativeLevel.
	{"system-top", v1alpha1.RequestPrioritySpec{PriorityLevel: 0}},
	// For system self-maintenance requests. Bound to node-high: kube-apiserver's
	// system-node-high sends the proposal's first class, the heartbeats of nodes (nodes and
	// leases), there; it is kube-apiserver's highest-weighted level for system components.
	{"system-high", bound(queued(1000, 10, 128, 6, 100), nativeNodeHigh)},
	// For the garbage collector. Bound to workload-high: the garbage collector runs in
	// kube-controller-manager, as user system:kube-controller-manager or service account
	// kube-system:generic-garbage-collector, which kube-apiserver's kube-controller-manager and
	// kube-system-service-accounts send to workload-high.
	{"system-low", bound(v1alpha1.RequestPrioritySpec{PriorityLevel: 2000,
		AssuredConcurrencyShares: ptr.To[int32](10), QueuesPerWidth: ptr.To[int32](1),
		QueueLengthLimit: ptr.To[int32](1000)}, nativeWorkloadHigh)},
	// For user requests from kubectl. Bound to global-default: kube-apiserver's global-default
	// classifies the requests of users that are neither service accounts nor system components.
	{"workload-high", bound(queued(9000, 10, 128, 6, 100), nativeGlobalDefault)},
	// For requests from controllers processing workload. Bound to workload-low: kube-apiserver's
	// service-accounts classifies the requests of workload service accounts there.
	{"workload-low", bound(queued(10000, 10, 128, 6, 100), nativeWorkloadLow)},
}

// flowSchemaSpecs are the default FlowSchema objects by name, best matching priority first.
var flowSchemaSpecs = []fsDecl{
	{name: "system-top", spec: v1alpha1.FlowSchemaSpec{
		MatchingPriority: 500,
		RequestPriority:  v1alpha1.RequestPriorityReference{Name: "system-top"},
		Match: []v1alpha1.Conjunction{
			and(superSet(v1alpha1.FieldGroups, "system:masters")), // requests by admins
		},
	}},
	{name: "system-high", spec: v1alpha1.FlowSchemaSpec{
		MatchingPriority:  100500,
		RequestPriority:   v1alpha1.RequestPriorityReference{Name: "system-high"},
		FlowDistinguisher: &v1alpha1.FlowDistinguisher{Source: v1alpha1.SourceUser},
		Match: []v1alpha1.Conjunction{
			and( // heartbeats by nodes
				superSet(v1alpha1.FieldGroups, "system:nodes"),
				equals(v1alpha1.FieldResource, "nodes")),
			and( // kubelet and kube-proxy operations on system objects
				superSet(v1alpha1.FieldGroups, "system:nodes"),
				equals(v1alpha1.FieldNamespace, "kube-system")),
			and( // leader elections of system controllers
				patternMatch(v1alpha1.FieldUser, "system:controller:.*"),
				inSet(v1alpha1.FieldResource, "endpoints", "configmaps", "leases"),
				equals(v1alpha1.FieldNamespace, "kube-system")),
		},
	}, withheld: "kube-apiserver's system-node-high (level node-high) and system-nodes (level system) classify " +
		"every request of group system:nodes ahead of any projected FlowSchema, and global-default (level " +
		"global-default) the requests of users named system:controller:*; projecting would move those users " +
		"to node-high, and its user pattern is not expressible natively either"},
	{name: "system-low", spec: v1alpha1.FlowSchemaSpec{
		MatchingPriority: 200500,
		RequestPriority:  v1alpha1.RequestPriorityReference{Name: "system-low"},
		Match: []v1alpha1.Conjunction{
			and(equals(v1alpha1.FieldUser, "system:controller:garbage-collector")), // the garbage collector
		},
	}, withheld: "kube-apiserver's global-default (level global-default) classifies the requests of user " +
		"system:controller:garbage-collector; projecting would move them to workload-high. The garbage " +
		"collector itself runs in kube-controller-manager, whose requests kube-apiserver's " +
		"kube-controller-manager and kube-system-service-accounts already send to workload-high"},
	{name: "workload-high", spec: v1alpha1.FlowSchemaSpec{
		MatchingPriority:  900500,
		RequestPriority:   v1alpha1.RequestPriorityReference{Name: "workload-high"},
		FlowDistinguisher: &v1alpha1.FlowDistinguisher{Source: v1alpha1.SourceNamespace},
		Match: []v1alpha1.Conjunction{
			and( // users using kubectl, resource requests only
				notPatternMatch(v1alpha1.FieldUser, "system:serviceaccount:.*"),
				patternMatch(v1alpha1.FieldResource, ".*")),
		},
	}, withheld: "kube-apiserver's global-default (level global-default, the one workload-high is bound to) " +
		"already classifies the resource requests of users that are not service accounts, after exempt, " +
		"system-leader-election, system-node-high, system-nodes, kube-controller-manager and kube-scheduler " +
		"took those of admins, nodes and the control plane; the FlowSchema's negated user pattern is not " +
		"expressible natively either"},
	{name: "workload-low", spec: v1alpha1.FlowSchemaSpec{
		MatchingPriority:  1000500,
		RequestPriority:   v1alpha1.RequestPriorityReference{Name: "workload-low"},
		FlowDistinguisher: &v1alpha1.FlowDistinguisher{Source: v1alpha1.SourceNamespace},
		Match: []v1alpha1.Conjunction{
			and(patternMatch(v1alpha1.FieldResource, ".*")), // every resource request
		},
	}, withheld: "kube-apiserver's service-accounts (level workload-low) classifies the resource requests of " +
		"workload service accounts, and global-default (level global-default) those of ordinary users; " +
		"projecting would move ordinary users to workload-low"},
}

// RequestPriorities returns fresh copies of the default RequestPriority objects
// (Default().RequestPriorities()).
func RequestPriorities() []v1alpha1.RequestPriority { return Default().RequestPriorities() }

// FlowSchemas returns fresh copies of the default FlowSchema objects
// (Default().FlowSchemas()).
func FlowSchemas() []v1alpha1.FlowSchema { return Default().FlowSchemas() }

func managedMeta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:        name,
		Labels:      map[string]string{v1alpha1.LabelManagedBy: v1alpha1.ManagedByValue},
		Annotations: map[string]string{v1alpha1.AnnotationAutoUpdate: "true"},
	}
}

func queued(level, shares, queues, hand, limit int32) v1alpha1.RequestPrioritySpec {
	return v1alpha1.RequestPrioritySpec{PriorityLevel: level, AssuredConcurrencyShares: &shares,
		QueuesPerWidth: &queues, HandSize: &hand, QueueLengthLimit: &limit}
}

// bound returns spec with nativeLevel set to level.
func bound(spec v1alpha1.RequestPrioritySpec, level string) v1alpha1.RequestPrioritySpec {
	spec.NativeLevel = level
	return spec
}

func and(tests ...v1alpha1.AtomicTest) v1alpha1.Conjunction {
	return v1alpha1.Conjunction{And: tests}
}

func equals(f v1alpha1.RequestField, v string) v1alpha1.AtomicTest {
	return v1alpha1.AtomicTest{Equals: &v1alpha1.ValueTest{Field: f, Value: v}}
}

func inSet(f v1alpha1.RequestField, set ...string) v1alpha1.AtomicTest {
	return v1alpha1.AtomicTest{InSet: &v1alpha1.SetTest{Field: f, Set: set}}
}

func superSet(f v1alpha1.RequestField, set ...string) v1alpha1.AtomicTest {
	return v1alpha1.AtomicTest{SuperSet: &v1alpha1.SetTest{Field: f, Set: set}}
}

func patternMatch(f v1alpha1.RequestField, p string) v1alpha1.AtomicTest {
	return v1alpha1.AtomicTest{PatternMatch: &v1alpha1.PatternTest{Field: f, Pattern: p}}
}

func notPatternMatch(f v1alpha1.RequestField, p string) v1alpha1.AtomicTest {
	return v1alpha1.AtomicTest{NotPatternMatch: &v1alpha1.PatternTest{Field: f, Pattern: p}}
}

// RequestPriority returns the default RequestPriority of that name, and whether
// there is one.
func RequestPriority(name string) (v1alpha1.RequestPriority, bool) {
	return byName(RequestPriorities(), name, func(rp v1alpha1.RequestPriority) string { return rp.Name })
}

// FlowSchema returns the default FlowSchema of that name, and whether there is one.
func FlowSchema(name string) (v1alpha1.FlowSchema, bool) {
	return byName(FlowSchemas(), name, func(fs v1alpha1.FlowSchema) string { return fs.Name })
}

func byName[T any](objs []T, name string, nameOf func(T) string) (T, bool) {
	for _, o := range objs {
		if nameOf(o) == name {
			return o, true
		}
	}
	var none T
	return none, false
}
