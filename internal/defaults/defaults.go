package defaults

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

// There are two sets of defaults (Set): the proposal's, for enforcement none and the
// in-process filter, and the native set, for enforcement native.
//
// The proposal's set holds the objects of its "Example Configuration", with its
// contradictions resolved as DESIGN.md "Where the proposal contradicts itself" decides:
//   - FlowSchema workload-low refers to RequestPriority workload-low (decision 1);
//   - FlowSchema system-low has no flow distinguisher, because its RequestPriority has one
//     queue per width (decision 2);
//   - FlowSchemas workload-high and workload-low distinguish flows by namespace, so each of
//     their conjunctions carries patternMatch {field: resource, pattern: ".*"} and accepts
//     resource requests only (decision 3). For workload-low the proposal's `and: []` has the
//     same contradiction as workload-high and gets the same fix; the non-resource requests it
//     no longer matches go to backstop non-top-backstop, which sits at the same (lowest) level.
//
// The native set holds only system-top (the RequestPriority at level 0, projected onto
// kube-apiserver's mandatory exempt level, and the FlowSchema sending system:masters to it):
// every other traffic class stays with kube-apiserver's own suggested schemas and levels, so
// installing the operator changes no class's level or seats (DESIGN.md "Defaults", turn 3;
// docs/enforcement.md "Defaults"). The proposal's other levels would take seats from
// kube-apiserver's (10 shares each against its 245) and two of them cannot be projected.
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
}

// systemTopRP and systemTopFS are the defaults both sets hold.
var (
	// For requests from admins and requests in service of other, potentially system, requests.
	systemTopRP = rpDecl{"system-top", v1alpha1.RequestPrioritySpec{PriorityLevel: 0}}
	systemTopFS = fsDecl{"system-top", v1alpha1.FlowSchemaSpec{
		MatchingPriority: 500,
		RequestPriority:  v1alpha1.RequestPriorityReference{Name: "system-top"},
		Match: []v1alpha1.Conjunction{
			and(superSet(v1alpha1.FieldGroups, "system:masters")), // requests by admins
		},
	}}
)

// nativeRequestPriorities and nativeFlowSchemas are the native set.
var (
	nativeRequestPriorities = []rpDecl{systemTopRP}
	nativeFlowSchemas       = []fsDecl{systemTopFS}
)

// requestPrioritySpecs are the proposal's default RequestPriority objects by name, logically
// highest first.
var requestPrioritySpecs = []rpDecl{
	systemTopRP,
	// For system self-maintenance requests.
	{"system-high", queued(1000, 10, 128, 6, 100)},
	// For the garbage collector.
	{"system-low", v1alpha1.RequestPrioritySpec{PriorityLevel: 2000,
		AssuredConcurrencyShares: ptr.To[int32](10), QueuesPerWidth: ptr.To[int32](1),
		QueueLengthLimit: ptr.To[int32](1000)}},
	// For user requests from kubectl.
	{"workload-high", queued(9000, 10, 128, 6, 100)},
	// For requests from controllers processing workload.
	{"workload-low", queued(10000, 10, 128, 6, 100)},
}

// flowSchemaSpecs are the proposal's default FlowSchema objects by name, best matching
// priority first.
var flowSchemaSpecs = []fsDecl{
	systemTopFS,
	{"system-high", v1alpha1.FlowSchemaSpec{
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
	}},
	{"system-low", v1alpha1.FlowSchemaSpec{
		MatchingPriority: 200500,
		RequestPriority:  v1alpha1.RequestPriorityReference{Name: "system-low"},
		Match: []v1alpha1.Conjunction{
			and(equals(v1alpha1.FieldUser, "system:controller:garbage-collector")), // the garbage collector
		},
	}},
	{"workload-high", v1alpha1.FlowSchemaSpec{
		MatchingPriority:  900500,
		RequestPriority:   v1alpha1.RequestPriorityReference{Name: "workload-high"},
		FlowDistinguisher: &v1alpha1.FlowDistinguisher{Source: v1alpha1.SourceNamespace},
		Match: []v1alpha1.Conjunction{
			and( // users using kubectl, resource requests only
				notPatternMatch(v1alpha1.FieldUser, "system:serviceaccount:.*"),
				patternMatch(v1alpha1.FieldResource, ".*")),
		},
	}},
	{"workload-low", v1alpha1.FlowSchemaSpec{
		MatchingPriority:  1000500,
		RequestPriority:   v1alpha1.RequestPriorityReference{Name: "workload-low"},
		FlowDistinguisher: &v1alpha1.FlowDistinguisher{Source: v1alpha1.SourceNamespace},
		Match: []v1alpha1.Conjunction{
			and(patternMatch(v1alpha1.FieldResource, ".*")), // every resource request
		},
	}},
}

// RequestPriorities returns fresh copies of the proposal's default RequestPriority objects
// (Proposal().RequestPriorities()).
func RequestPriorities() []v1alpha1.RequestPriority { return Proposal().RequestPriorities() }

// FlowSchemas returns fresh copies of the proposal's default FlowSchema objects
// (Proposal().FlowSchemas()).
func FlowSchemas() []v1alpha1.FlowSchema { return Proposal().FlowSchemas() }

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

// RequestPriority returns the proposal's default RequestPriority of that name, and whether
// there is one.
func RequestPriority(name string) (v1alpha1.RequestPriority, bool) {
	return byName(RequestPriorities(), name, func(rp v1alpha1.RequestPriority) string { return rp.Name })
}

// FlowSchema returns the proposal's default FlowSchema of that name, and whether there is one.
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
