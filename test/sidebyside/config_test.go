package sidebyside

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apitest"
	"github.com/apf-operator/apf-operator/internal/defaults"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/internal/nativeview/bootstrapset"
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
		schema("t-ab", 1000, "tenant-gold", byUser, apitest.And(apitest.InSet(user, "alice", "bob"))),
		// Reads (watch included) of two kinds of objects themselves, in one namespace or cluster-wide.
		schema("t-c-reads", 1100, "tenant-gold", byNamespace, apitest.And(apitest.Equals(user, "carol"),
			apitest.InSet(verb, "get", "list", "watch"), apitest.InSet(resource, "configmaps", "secrets"), apitest.Equals(sub, ""),
			apitest.InSet(ns, "team-a", ""))),
		// A group; an API group; objects and two subresources.
		schema("t-ops-apps", 1200, "tenant-bronze", nil, apitest.And(apitest.SuperSet("ops"), apitest.Equals(apiGroup, "apps"),
			apitest.InSet(resource, "deployments", "statefulsets"), apitest.InSet(sub, "", "scale", "status"))),
		// Writes by a user and a service account: a negated verb set over the resource verbs.
		schema("t-batch-writers", 1300, "tenant-gold", nil, apitest.And(apitest.InSet(user, "dave", "system:serviceaccount:team-b:builder"),
			apitest.NotInSet(verb, "get", "list", "watch", ""), apitest.Equals(apiGroup, "batch"), apitest.InSet(resource, "jobs", "cronjobs"),
			apitest.Equals(sub, ""), apitest.Equals(ns, "team-b"))),
		// A non-resource prefix.
		schema("t-apis", 1400, "tenant-bronze", nil, apitest.And(apitest.Equals(user, "erin"), apitest.PatternMatch(path, "/apis/.*"))),
		// A non-resource path and everything below it, on two methods.
		schema("t-version", 1500, "tenant-gold", nil, apitest.And(apitest.InSet(user, "erin", "frank"), apitest.PatternMatch(path, "/version(/.*)?"),
			apitest.InSet(verb, "get", "patch"))),
		// Resource and non-resource requests in one conjunction, and a second conjunction.
		schema("t-mixed", 1600, "tenant-gold", nil, apitest.And(apitest.Equals(user, "grace"), apitest.InSet(verb, "get", "list")),
			apitest.And(apitest.Equals(user, "grace"), apitest.Equals(verb, "delete"), apitest.PatternMatch(path, "/foo/.*"))),
		// A namespace pattern with a finite language.
		schema("t-kube-ns", 1700, "tenant-bronze", nil, apitest.And(apitest.Equals(user, "heidi"), apitest.PatternMatch(ns, "kube-(system|public)"),
			apitest.Equals(resource, "configmaps"), apitest.Equals(sub, ""))),
		// Service accounts; every resource and subresource (wildcard patterns); a negated verb.
		schema("t-sa-team", 1800, "tenant-gold", nil, apitest.And(apitest.InSet(user, "system:serviceaccount:team-a:deployer",
			"system:serviceaccount:team-a:viewer"), apitest.NotEquals(verb, "delete"), apitest.NotEquals(verb, ""), apitest.PatternMatch(resource, ".*"), apitest.PatternMatch(sub, ".*"))),
		// Every authenticated user, on one kind of object.
		schema("t-authn-get-deploy", 2000, "tenant-bronze", nil, apitest.And(apitest.SuperSet("system:authenticated"), apitest.Equals(verb, "get"),
			apitest.Equals(apiGroup, "apps"), apitest.Equals(resource, "deployments"), apitest.Equals(sub, ""))),
		// Anonymous requests for the OpenAPI documents.
		schema("t-anon-openapi", 2100, "tenant-bronze", nil, apitest.And(apitest.SuperSet("system:unauthenticated"),
			apitest.PatternMatch(path, "/openapi/.*"), apitest.Equals(verb, "get"))),
		// Leader election of named controllers in any namespace (not cluster-scoped), on system-high.
		schema("t-leader", 2200, "system-high", byUser, apitest.And(apitest.InSet(user, "system:controller:foo", "system:controller:bar"),
			apitest.Equals(apiGroup, "coordination.k8s.io"), apitest.Equals(resource, "leases"), apitest.Equals(sub, ""), apitest.PatternMatch(ns, ".+"))),
		// Developers' resource requests, on workload-high.
		schema("t-developers", 2300, "workload-high", byNamespace, apitest.And(apitest.SuperSet("developers"), apitest.PatternMatch(resource, ".*"),
			apitest.PatternMatch(sub, ".*"))),
		// A user on the exempt level.
		schema("t-ops-exempt", 2400, "system-top", nil, apitest.And(apitest.Equals(user, "ops-admin"))),
		// Overlapping schemas of one user: the better matching priority wins.
		schema("t-trent-get", 2500, "tenant-gold", nil, apitest.And(apitest.Equals(user, "trent"), apitest.Equals(verb, "get"))),
		schema("t-trent", 2600, "tenant-bronze", nil, apitest.And(apitest.Equals(user, "trent"))),
		// After workload-low, which takes every resource request first: only non-resource ones.
		schema("t-late", 1000600, "tenant-gold", nil, apitest.And(apitest.Equals(user, "system:serviceaccount:late:sa"))),
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

// unbounded lets the whole configuration be projected: the comparison is about classification,
// and its levels hold more shares than the default share budget (27) admits. The defaults are
// bound to kube-apiserver's levels, which upstream holds too (its bootstrap objects).
var unbounded = native.Existing{MaxSeatLossPercent: ptr.To[int32](90), Unmatched: native.UnmatchedOperator,
	AssumedLevels: bootstrapset.PriorityLevels()}
