package sidebyside

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/defaults"
)

// notExpressibleDefaults are the default FlowSchemas the projection cannot express exactly
// (internal/native: a pattern or negation over the unbounded domain of user names), so nothing
// is projected for them and kube-apiserver classifies their requests elsewhere by design:
// system-high matches patternMatch {user, "system:controller:.*"}, workload-high
// notPatternMatch {user, "system:serviceaccount:.*"}. They are left out of the configuration;
// their RequestPriorities stay, and tenant schemas below use those levels.
var notExpressibleDefaults = []string{"system-high", "workload-high"}

// Short names for the request fields.
const (
	user, groups, verb, apiGroup = flowv1.FieldUser, flowv1.FieldGroups, flowv1.FieldVerb, flowv1.FieldAPIGroup
	resource, sub, ns, path      = flowv1.FieldResource, flowv1.FieldSubresource, flowv1.FieldNamespace, flowv1.FieldPath
)

// configuration returns the RequestPriorities and FlowSchemas both filters get: the operator's
// defaults (less notExpressibleDefaults) and tenant objects exercising every kind of test the
// projection expresses exactly, each FlowSchema at its own matching priority.
func configuration() ([]flowv1.RequestPriority, []flowv1.FlowSchema) {
	rps := append(defaults.RequestPriorities(),
		requestPriority("tenant-gold", 3000, 20, 32, 4, 50),
		requestPriority("tenant-bronze", 4000, 5, 1, 0, 20))
	var fss []flowv1.FlowSchema
	for _, fs := range defaults.FlowSchemas() {
		if !slices.Contains(notExpressibleDefaults, fs.Name) {
			fss = append(fss, fs)
		}
	}
	return rps, append(fss, tenantSchemas()...)
}

// tenantSchemas are the tenants' FlowSchemas, between the defaults system-top (500) and
// workload-low (1000500, every resource request) except t-late, which comes after it.
func tenantSchemas() []flowv1.FlowSchema {
	byUser := &flowv1.FlowDistinguisher{Source: flowv1.SourceUser}
	byNamespace := &flowv1.FlowDistinguisher{Source: flowv1.SourceNamespace}
	return []flowv1.FlowSchema{
		// Every request of two users.
		schema("t-ab", 1000, "tenant-gold", byUser, and(inSet(user, "alice", "bob"))),
		// Reads (watch included) of two kinds of objects themselves, in one namespace or cluster-wide.
		schema("t-c-reads", 1100, "tenant-gold", byNamespace, and(equals(user, "carol"),
			inSet(verb, "get", "list", "watch"), inSet(resource, "configmaps", "secrets"), equals(sub, ""),
			inSet(ns, "team-a", ""))),
		// A group; an API group; objects and two subresources.
		schema("t-ops-apps", 1200, "tenant-bronze", nil, and(superSet("ops"), equals(apiGroup, "apps"),
			inSet(resource, "deployments", "statefulsets"), inSet(sub, "", "scale", "status"))),
		// Writes by a user and a service account: a negated verb set over the resource verbs.
		schema("t-batch-writers", 1300, "tenant-gold", nil, and(inSet(user, "dave", "system:serviceaccount:team-b:builder"),
			notInSet(verb, "get", "list", "watch"), equals(apiGroup, "batch"), inSet(resource, "jobs", "cronjobs"),
			equals(sub, ""), equals(ns, "team-b"))),
		// A non-resource prefix.
		schema("t-apis", 1400, "tenant-bronze", nil, and(equals(user, "erin"), pattern(path, "/apis/.*"))),
		// A non-resource path and everything below it, on two methods.
		schema("t-version", 1500, "tenant-gold", nil, and(inSet(user, "erin", "frank"), pattern(path, "/version(/.*)?"),
			inSet(verb, "get", "patch"))),
		// Resource and non-resource requests in one conjunction, and a second conjunction.
		schema("t-mixed", 1600, "tenant-gold", nil, and(equals(user, "grace"), inSet(verb, "get", "list")),
			and(equals(user, "grace"), equals(verb, "delete"), pattern(path, "/foo/.*"))),
		// A namespace pattern with a finite language.
		schema("t-kube-ns", 1700, "tenant-bronze", nil, and(equals(user, "heidi"), pattern(ns, "kube-(system|public)"),
			equals(resource, "configmaps"), equals(sub, ""))),
		// Service accounts; every resource and subresource (wildcard patterns); a negated verb.
		schema("t-sa-team", 1800, "tenant-gold", nil, and(inSet(user, "system:serviceaccount:team-a:deployer",
			"system:serviceaccount:team-a:viewer"), notEquals(verb, "delete"), pattern(resource, ".*"), pattern(sub, ".*"))),
		// Every authenticated user, on one kind of object.
		schema("t-authn-get-deploy", 2000, "tenant-bronze", nil, and(superSet("system:authenticated"), equals(verb, "get"),
			equals(apiGroup, "apps"), equals(resource, "deployments"), equals(sub, ""))),
		// Anonymous requests for the OpenAPI documents.
		schema("t-anon-openapi", 2100, "tenant-bronze", nil, and(superSet("system:unauthenticated"),
			pattern(path, "/openapi/.*"), equals(verb, "get"))),
		// Leader election of named controllers in any namespace (not cluster-scoped), on system-high.
		schema("t-leader", 2200, "system-high", byUser, and(inSet(user, "system:controller:foo", "system:controller:bar"),
			equals(apiGroup, "coordination.k8s.io"), equals(resource, "leases"), equals(sub, ""), pattern(ns, ".+"))),
		// Developers' resource requests, on workload-high.
		schema("t-developers", 2300, "workload-high", byNamespace, and(superSet("developers"), pattern(resource, ".*"),
			pattern(sub, ".*"))),
		// A user on the exempt level.
		schema("t-ops-exempt", 2400, "system-top", nil, and(equals(user, "ops-admin"))),
		// Overlapping schemas of one user: the better matching priority wins.
		schema("t-trent-get", 2500, "tenant-gold", nil, and(equals(user, "trent"), equals(verb, "get"))),
		schema("t-trent", 2600, "tenant-bronze", nil, and(equals(user, "trent"))),
		// After workload-low, which takes every resource request first: only non-resource ones.
		schema("t-late", 1000600, "tenant-gold", nil, and(equals(user, "system:serviceaccount:late:sa"))),
	}
}

// requestPriority is a queued level; hand 0 leaves handSize out (a single queue has none).
func requestPriority(name string, level, shares, queues, hand, limit int32) flowv1.RequestPriority {
	rp := flowv1.RequestPriority{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: flowv1.RequestPrioritySpec{
		PriorityLevel: level, AssuredConcurrencyShares: ptr.To(shares), QueuesPerWidth: ptr.To(queues),
		QueueLengthLimit: ptr.To(limit)}}
	if hand > 0 {
		rp.Spec.HandSize = ptr.To(hand)
	}
	return rp
}

func schema(name string, matching int32, level string, d *flowv1.FlowDistinguisher, match ...flowv1.Conjunction) flowv1.FlowSchema {
	return flowv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: flowv1.FlowSchemaSpec{
		MatchingPriority: matching, RequestPriority: flowv1.RequestPriorityReference{Name: level},
		FlowDistinguisher: d, Match: match}}
}

func and(tests ...flowv1.AtomicTest) flowv1.Conjunction { return flowv1.Conjunction{And: tests} }

func equals(f flowv1.RequestField, v string) flowv1.AtomicTest {
	return flowv1.AtomicTest{Equals: &flowv1.ValueTest{Field: f, Value: v}}
}

func notEquals(f flowv1.RequestField, v string) flowv1.AtomicTest {
	return flowv1.AtomicTest{NotEquals: &flowv1.ValueTest{Field: f, Value: v}}
}

func inSet(f flowv1.RequestField, set ...string) flowv1.AtomicTest {
	return flowv1.AtomicTest{InSet: &flowv1.SetTest{Field: f, Set: set}}
}

func notInSet(f flowv1.RequestField, set ...string) flowv1.AtomicTest {
	return flowv1.AtomicTest{NotInSet: &flowv1.SetTest{Field: f, Set: set}}
}

func superSet(group string) flowv1.AtomicTest {
	return flowv1.AtomicTest{SuperSet: &flowv1.SetTest{Field: groups, Set: []string{group}}}
}

func pattern(f flowv1.RequestField, p string) flowv1.AtomicTest {
	return flowv1.AtomicTest{PatternMatch: &flowv1.PatternTest{Field: f, Pattern: p}}
}
