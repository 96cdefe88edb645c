package native_test

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8svalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/classify"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apf/request"
	"github.com/apf-operator/apf-operator/internal/apitest"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/internal/nativeview/bootstrapset"
	"github.com/apf-operator/apf-operator/internal/validation"
)

// This file checks the promise of the package: a FlowSchema is projected only when the native
// rules accept exactly the requests it accepts. Configurations (every operator on every field)
// are built with effective.Compute, projected with native.Project and compared, request by
// request, with a native matcher written here after kube-apiserver's
// pkg/util/flowcontrol/rule.go (unexported there). For every plan checkProjection asserts:
//
//   - per schema: a projected FlowSchema's conjunctions accept a request iff its native
//     FlowSchema does (the backstop non-top-backstop included);
//   - whole classification: for a request outside system:masters whose FlowSchema (chosen by
//     classify) is projected, kube-apiserver's first match, after its mandatory `exempt`
//     FlowSchema, is that FlowSchema's projection;
//   - every native FlowSchema is valid for kube-apiserver (its validation, restated below),
//     refers to the native level of its RequestPriority, and names and sources are unique;
//     Results agree with the objects; Project is deterministic.
//
// TestProjectionEquivalence and FuzzProjectionEquivalence draw random configurations and
// requests (most aimed at a conjunction, so that they fall on both sides of its boundary);
// TestProjectionSingleTests sweeps every operator with every literal and pattern on every
// field; TestProjectionExamples and TestProjectionRegressions hold known cases.
//
// The requests stay within the domain the projection documents: attribute values without a
// newline, a non-empty user name, resource requests with a resource verb or "" (the verb
// kube-apiserver gives OPTIONS, TRACE and custom methods) and a resource (possibly "", from a
// path with an empty segment) and subresource without "/", non-resource requests with a
// lower-case HTTP method and a path starting with "/".

// ---- kube-apiserver's matching, restated ----

// nativeAccepts is matchesFlowSchema: some rule has a subject that names the user and a
// resource rule (for a resource request) or non-resource rule (otherwise) that accepts it.
func nativeAccepts(fs *flowcontrolv1.FlowSchema, a *request.Attributes) bool {
	for i := range fs.Spec.Rules {
		r := &fs.Spec.Rules[i]
		if !slices.ContainsFunc(r.Subjects, func(s flowcontrolv1.Subject) bool { return nativeSubject(s, a) }) {
			continue
		}
		if a.ResourceRequest {
			if slices.ContainsFunc(r.ResourceRules, func(rr flowcontrolv1.ResourcePolicyRule) bool {
				return nativeResourceRule(&rr, a)
			}) {
				return true
			}
			continue
		}
		if slices.ContainsFunc(r.NonResourceRules, func(nr flowcontrolv1.NonResourcePolicyRule) bool {
			return nativeNonResourceRule(&nr, a)
		}) {
			return true
		}
	}
	return false
}

// nativeSubject: a user subject names the user or is "*"; a group subject is one of the
// user's groups or "*"; a service account subject is matched on the user name.
func nativeSubject(s flowcontrolv1.Subject, a *request.Attributes) bool {
	switch s.Kind {
	case flowcontrolv1.SubjectKindUser:
		return s.User != nil && (s.User.Name == flowcontrolv1.NameAll || s.User.Name == a.User)
	case flowcontrolv1.SubjectKindGroup:
		return s.Group != nil && (s.Group.Name == flowcontrolv1.NameAll || slices.Contains(a.Groups, s.Group.Name))
	case flowcontrolv1.SubjectKindServiceAccount:
		if s.ServiceAccount == nil {
			return false
		}
		prefix := "system:serviceaccount:" + s.ServiceAccount.Namespace + ":"
		if s.ServiceAccount.Name == flowcontrolv1.NameAll {
			return strings.HasPrefix(a.User, prefix)
		}
		return a.User == prefix+s.ServiceAccount.Name
	}
	return false
}

// nativeListed is containsString: the value is in the list, or the list is exactly the wildcard
// (a wildcard among other entries is no wildcard).
func nativeListed(list []string, v, wildcard string) bool {
	return (len(list) == 1 && list[0] == wildcard) || slices.Contains(list, v)
}

// nativeResourceRule: verb, then "resource" or "resource/subresource", then API group, then the
// namespace: a request without one needs clusterScope, any other needs its namespace listed.
func nativeResourceRule(r *flowcontrolv1.ResourcePolicyRule, a *request.Attributes) bool {
	joined := a.Resource
	if a.Subresource != "" {
		joined += "/" + a.Subresource
	}
	switch {
	case !nativeListed(r.Verbs, a.Verb, flowcontrolv1.VerbAll),
		!nativeListed(r.Resources, joined, flowcontrolv1.ResourceAll),
		!nativeListed(r.APIGroups, a.APIGroup, flowcontrolv1.APIGroupAll):
		return false
	case a.Namespace == "":
		return r.ClusterScope
	}
	return nativeListed(r.Namespaces, a.Namespace, flowcontrolv1.NamespaceEvery)
}

// nativeNonResourceRule: verb, then a URL that is "*", the path itself, or a prefix of it once
// a trailing "*" is dropped and a "/" ensured at its end.
func nativeNonResourceRule(r *flowcontrolv1.NonResourcePolicyRule, a *request.Attributes) bool {
	if !nativeListed(r.Verbs, a.Verb, flowcontrolv1.VerbAll) {
		return false
	}
	for _, u := range r.NonResourceURLs {
		if u == flowcontrolv1.NonResourceAll || u == a.Path {
			return true
		}
		prefix := strings.TrimSuffix(u, "*")
		if !strings.HasSuffix(prefix, "/") {
			prefix += "/"
		}
		if strings.HasPrefix(a.Path, prefix) {
			return true
		}
	}
	return false
}

// nativeOrder is the order in which kube-apiserver tries the FlowSchemas: by matching precedence,
// then name, with its mandatory `exempt` FlowSchema (precedence 1, group system:masters) first.
func nativeOrder(plan *native.Plan) []*flowcontrolv1.FlowSchema {
	out := []*flowcontrolv1.FlowSchema{mandatoryExempt()}
	for i := range plan.FlowSchemas {
		out = append(out, &plan.FlowSchemas[i])
	}
	sort.SliceStable(out, func(i, j int) bool {
		if pi, pj := out[i].Spec.MatchingPrecedence, out[j].Spec.MatchingPrecedence; pi != pj {
			return pi < pj
		}
		return out[i].Name < out[j].Name
	})
	return out
}

func nativeFirstMatch(order []*flowcontrolv1.FlowSchema, a *request.Attributes) *flowcontrolv1.FlowSchema {
	for _, fs := range order {
		if nativeAccepts(fs, a) {
			return fs
		}
	}
	return nil
}

// ---- kube-apiserver's validation of a FlowSchema spec, restated ----

var nativeSupportedVerbs = []string{"get", "list", "create", "update", "delete", "deletecollection", "patch", "watch", "proxy"}

// nativeProblems lists what kube-apiserver's ValidateFlowSchemaSpec would reject, and a
// reference to a level that is neither `exempt` nor one the plan writes (kube-apiserver would
// skip the FlowSchema as dangling).
func nativeProblems(fs *flowcontrolv1.FlowSchema, levels map[string]bool) []string {
	var out []string
	bad := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	spec := &fs.Spec
	if spec.MatchingPrecedence < 2 || spec.MatchingPrecedence > flowcontrolv1.FlowSchemaMaxMatchingPrecedence {
		bad("matchingPrecedence %d outside [2, %d]", spec.MatchingPrecedence, flowcontrolv1.FlowSchemaMaxMatchingPrecedence)
	}
	if d := spec.DistinguisherMethod; d != nil && d.Type != flowcontrolv1.FlowDistinguisherMethodByUserType &&
		d.Type != flowcontrolv1.FlowDistinguisherMethodByNamespaceType {
		bad("distinguisher method %q", d.Type)
	}
	if !levels[spec.PriorityLevelConfiguration.Name] {
		bad("priority level %q is not in the plan", spec.PriorityLevelConfiguration.Name)
	}
	for i, r := range spec.Rules {
		if len(r.Subjects) == 0 {
			bad("rules[%d]: no subjects", i)
		}
		for _, s := range r.Subjects {
			switch {
			case s.Kind == flowcontrolv1.SubjectKindUser && s.User != nil && s.Group == nil && s.ServiceAccount == nil:
				if s.User.Name == "" {
					bad("rules[%d]: user subject without a name", i)
				}
			case s.Kind == flowcontrolv1.SubjectKindGroup && s.Group != nil && s.User == nil && s.ServiceAccount == nil:
				if s.Group.Name == "" {
					bad("rules[%d]: group subject without a name", i)
				}
			default:
				bad("rules[%d]: unexpected subject %+v", i, s)
			}
		}
		if len(r.ResourceRules) == 0 && len(r.NonResourceRules) == 0 {
			bad("rules[%d]: neither resource nor non-resource rules", i)
		}
		for _, rr := range r.ResourceRules {
			out = append(out, listProblems(i, "verbs", rr.Verbs, true)...)
			out = append(out, listProblems(i, "apiGroups", rr.APIGroups, false)...)
			out = append(out, listProblems(i, "resources", rr.Resources, false)...)
			if len(rr.Namespaces) == 0 && !rr.ClusterScope {
				bad("rules[%d]: no namespaces and not cluster scoped", i)
			} else if slices.Contains(rr.Namespaces, flowcontrolv1.NamespaceEvery) {
				if len(rr.Namespaces) > 1 {
					bad("rules[%d]: namespaces %q: '*' among others", i, rr.Namespaces)
				}
			} else {
				for _, ns := range rr.Namespaces {
					if msgs := k8svalidation.IsDNS1123Label(ns); len(msgs) > 0 {
						bad("rules[%d]: namespace %q: %s", i, ns, strings.Join(msgs, "; "))
					}
				}
			}
		}
		for _, nr := range r.NonResourceRules {
			out = append(out, listProblems(i, "verbs", nr.Verbs, true)...)
			out = append(out, listProblems(i, "nonResourceURLs", nr.NonResourceURLs, false)...)
			if !slices.Contains(nr.NonResourceURLs, flowcontrolv1.NonResourceAll) {
				for _, u := range nr.NonResourceURLs {
					if p := nativeURLProblem(u); p != "" {
						bad("rules[%d]: nonResourceURL %q: %s", i, u, p)
					}
				}
			}
		}
	}
	return out
}

func listProblems(i int, what string, list []string, verbs bool) []string {
	switch {
	case len(list) == 0:
		return []string{fmt.Sprintf("rules[%d]: %s empty", i, what)}
	case len(list) > 1 && slices.Contains(list, "*"):
		return []string{fmt.Sprintf("rules[%d]: %s %q: '*' among others", i, what, list)}
	case verbs && (len(list) != 1 || list[0] != "*"):
		for _, v := range list {
			if !slices.Contains(nativeSupportedVerbs, v) {
				return []string{fmt.Sprintf("rules[%d]: verb %q not supported", i, v)}
			}
		}
	}
	return nil
}

// nativeURLProblem is ValidateNonResourceURLPath.
func nativeURLProblem(u string) string {
	switch {
	case u == "":
		return "empty"
	case u == "/":
		return ""
	case !strings.HasPrefix(u, "/"):
		return "must start with a slash"
	case strings.Contains(u, " "):
		return "white space"
	case strings.Contains(u, "//"):
		return "double slash"
	}
	if n := strings.Count(u, "*"); n > 1 || (n == 1 && !strings.HasSuffix(u, "/*")) {
		return "wildcard other than a trailing /*"
	}
	return ""
}

// ---- our semantics, restated (as the classifier's reference test reads the specification) ----

func ourAttribute(a *request.Attributes, f flowv1.RequestField) (string, bool) {
	switch f {
	case flowv1.FieldUser:
		return a.User, true
	case flowv1.FieldVerb:
		return a.Verb, true
	case flowv1.FieldPath:
		return a.Path, !a.ResourceRequest
	case flowv1.FieldAPIGroup:
		return a.APIGroup, a.ResourceRequest
	case flowv1.FieldResource:
		return a.Resource, a.ResourceRequest
	case flowv1.FieldSubresource:
		return a.Subresource, a.ResourceRequest
	case flowv1.FieldNamespace:
		return a.Namespace, a.ResourceRequest
	case flowv1.FieldName:
		return a.Name, a.ResourceRequest
	}
	panic("unexpected field " + f)
}

var regexps sync.Map // pattern -> *regexp.Regexp, anchored

func fullMatch(pattern, v string) bool {
	re, ok := regexps.Load(pattern)
	if !ok {
		re, _ = regexps.LoadOrStore(pattern, regexp.MustCompile(`^(?:`+pattern+`)$`))
	}
	return re.(*regexp.Regexp).MatchString(v)
}

func ourTest(t *flowv1.AtomicTest, a *request.Attributes) bool {
	scalar := func(f flowv1.RequestField, holds func(string) bool) bool {
		v, ok := ourAttribute(a, f)
		return ok && holds(v)
	}
	hasAll := func(set []string) bool {
		return !slices.ContainsFunc(set, func(g string) bool { return !slices.Contains(a.Groups, g) })
	}
	switch {
	case t.Equals != nil:
		return scalar(t.Equals.Field, func(v string) bool { return v == t.Equals.Value })
	case t.NotEquals != nil:
		return !scalar(t.NotEquals.Field, func(v string) bool { return v == t.NotEquals.Value })
	case t.InSet != nil:
		return scalar(t.InSet.Field, func(v string) bool { return slices.Contains(t.InSet.Set, v) })
	case t.NotInSet != nil:
		return !scalar(t.NotInSet.Field, func(v string) bool { return slices.Contains(t.NotInSet.Set, v) })
	case t.SuperSet != nil:
		return hasAll(t.SuperSet.Set)
	case t.NotSuperSet != nil:
		return !hasAll(t.NotSuperSet.Set)
	case t.PatternMatch != nil:
		return scalar(t.PatternMatch.Field, func(v string) bool { return fullMatch(t.PatternMatch.Pattern, v) })
	case t.NotPatternMatch != nil:
		return !scalar(t.NotPatternMatch.Field, func(v string) bool { return fullMatch(t.NotPatternMatch.Pattern, v) })
	}
	panic("atomic test without operator")
}

func ourAccepts(match []flowv1.Conjunction, a *request.Attributes) bool {
	return slices.ContainsFunc(match, func(c flowv1.Conjunction) bool {
		return !slices.ContainsFunc(c.And, func(t flowv1.AtomicTest) bool { return !ourTest(&t, a) })
	})
}

// ---- random configurations and requests ----

// chooser is a source of choices: a seeded generator or a fuzzer's bytes.
type chooser interface{ intn(n int) int }

type randChooser struct{ r *rand.Rand }

func (c randChooser) intn(n int) int { return c.r.IntN(n) }

type bytesChooser struct{ b []byte }

func (c *bytesChooser) intn(n int) int {
	if len(c.b) == 0 {
		return 0
	}
	v := int(c.b[0])
	c.b = c.b[1:]
	return v % n
}

func pick[T any](c chooser, from []T) T { return from[c.intn(len(from))] }

// value is a literal for a test of f: usually one requests have, sometimes an odd one.
func value(c chooser, f flowv1.RequestField) string {
	if f == flowv1.FieldGroups {
		if c.intn(8) == 0 {
			return pick(c, oddGroups)
		}
		return pick(c, testGroups)
	}
	if c.intn(8) == 0 {
		return pick(c, oddValues[f])
	}
	return pick(c, testValues[f])
}

func valueSet(c chooser, f flowv1.RequestField) []string {
	set := make([]string, 1+c.intn(3))
	for i := range set {
		set[i] = value(c, f)
	}
	return set
}

var (
	resourceVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection", "proxy"}
	// requestResourceVerbs are the verbs of resource requests: the nine and "" (OPTIONS, TRACE,
	// custom methods).
	requestResourceVerbs = append(slices.Clone(resourceVerbs), "")
	nonResourceVerbs     = []string{"get", "post", "put", "patch", "delete", "head", "options"}

	// testValues are the literals of tests, values requests have; oddValues, less often, values
	// no request has ("", "*" and "GET" among them) or that native rules cannot list ("NS_1").
	testValues = map[flowv1.RequestField][]string{
		flowv1.FieldUser:        {"alice", "bob", "carol", "system:controller:gc", "system:serviceaccount:ns1:sa", "tenant-abc"},
		flowv1.FieldVerb:        union(resourceVerbs, nonResourceVerbs),
		flowv1.FieldAPIGroup:    {"", "apps", "coordination.k8s.io", "batch"},
		flowv1.FieldResource:    {"pods", "nodes", "leases", "namespaces"},
		flowv1.FieldSubresource: {"", "status", "log", "exec"},
		flowv1.FieldNamespace:   {"", "ns1", "kube-system", "kube-public", "tenant-a"},
		flowv1.FieldName:        {"", "web", "n1"},
		flowv1.FieldPath:        {"/healthz", "/healthz/etcd", "/apis", "/apis/", "/api", "/metrics", "/"},
	}
	oddValues = map[flowv1.RequestField][]string{
		flowv1.FieldUser:        {"*", ""},
		flowv1.FieldVerb:        {"*", "GET", ""},
		flowv1.FieldAPIGroup:    {"*"},
		flowv1.FieldResource:    {"pods/log", "*", ""},
		flowv1.FieldSubresource: {"*", "log/x"},
		flowv1.FieldNamespace:   {"NS_1", "*"},
		flowv1.FieldName:        {"*"},
		flowv1.FieldPath:        {"*", "healthz"},
	}
	testGroups = []string{"system:masters", "system:authenticated", "system:nodes", "team-x", "team-y"}
	oddGroups  = []string{"*", ""}

	// patterns are used on every field: finite languages, every value, prefixes, subtrees,
	// and unbounded or unrecognised languages.
	patterns = []string{
		".*", "(?s).*", "(.*)",
		"get|list", "get|patch|delete", "post|get", "(get)", "watch|proxy|create",
		"kube-(system|public)", "ns[12]", "n[0-9]", "(pods|nodes)", "pods|leases", "status|", "log|exec", "apps|",
		"alice|bob", "team-x", "web|", "[*]", "(?i)pods",
		"system:controller:.*", "system:.*", "tenant-.*",
		"/apis/.*", "/.*", "/healthz/.*", "/healthz(/.*)?", "/api(/.*)?", "/(/.*)?", "/metrics(/.*)?",
		"tenant-[a-z]+", "[a-z]*", "[a-z]+", ".+", "(?s).+", "/api.*", "(/healthz|/livez)(/.*)?", "/api(s.*)?",
		// anchors, redundant for a whole-value match, and anchors that are not
		"^(get|list)$", "^kube-(system|public)$", "^system:.*$", "^/healthz(/.*)?$", "^$", "^.*$", "a^b", "^alice|bob$",
		// U+FFFD, which a regular expression also matches on a byte that is not UTF-8
		`alice|\x{FFFD}`, `apps|[\x{FFF0}-\x{FFFF}]`,
	}
	pathPatterns = []string{".*", "/apis/.*", "/.*", "/healthz/.*", "/healthz(/.*)?", "/api(/.*)?", "/metrics(/.*)?"}

	// fieldPatterns are patterns written for one field, so that they meet its values often.
	fieldPatterns = map[flowv1.RequestField][]string{
		flowv1.FieldUser: {"alice|bob", "system:controller:gc", "system:controller:.*", "system:.*", "tenant-[a-z]+",
			"(?i)alice", "tenant-ab?c",
			".*", `alice|\x{FFFD}`, `bob|\x{D800}`},
		flowv1.FieldVerb:        {"get|list", "get|patch|delete", "post|get", "watch|proxy|create", "(get)", "de.*", ".*", "[*]"},
		flowv1.FieldAPIGroup:    {"apps|", "(apps|batch)", "coordination\\.k8s\\.io", ".*", `apps|[\x{FFF0}-\x{FFFF}]`, "[*]"},
		flowv1.FieldResource:    {"(pods|nodes)", "pods|leases", "pods?", "namespaces|pods/log", ".*", "[*]", "()"},
		flowv1.FieldSubresource: {"status|", "log|exec", "()", "(status)", ".*", "[*]|log"},
		flowv1.FieldNamespace:   {"kube-(system|public)", "ns[12]", "ns1?", "|ns1", "kube-.*", "tenant-[a-z]+", ".*", "NS_1|ns1"},
		flowv1.FieldName:        {"web|", "n[0-9]", ".*"},
		flowv1.FieldPath: append(slices.Clone(pathPatterns), "/healthz", "/api.*", "/(/.*)?", "/ap(i|is)/.*", "/a b/.*",
			"^/apis/.*$", "^/healthz(/.*)?$"),
	}

	scalarFields = []flowv1.RequestField{flowv1.FieldUser, flowv1.FieldVerb, flowv1.FieldAPIGroup,
		flowv1.FieldResource, flowv1.FieldSubresource, flowv1.FieldNamespace, flowv1.FieldName, flowv1.FieldPath}

	// Requests' values: the tests' values that requests can have, and others.
	requestUsers = []string{"alice", "bob", "carol", "dave", "system:controller:gc", "system:controller:",
		"system:controller:job", "system:serviceaccount:ns1:sa", "system:node:n1", "tenant-abc", "tenant-", "tenant-a1",
		"Tenant-b", "ALICE", "tenant-ac", "*", "\xff", "\uFFFD"}
	requestGroups       = []string{"system:authenticated", "system:nodes", "team-x", "team-y", "team-z", "*", ""}
	requestAPIGroups    = []string{"", "apps", "coordination.k8s.io", "batch", "storage.k8s.io", "*", "\xff"}
	requestResources    = []string{"pods", "pod", "Pods", "nodes", "leases", "namespaces", "secrets", "*", ""}
	requestSubresources = []string{"", "", "status", "log", "exec", "scale", "*"}
	requestNamespaces   = []string{"", "", "ns", "ns1", "ns2", "kube-system", "kube-public", "tenant-a", "NS_1", "kube-", "*"}
	requestNames        = []string{"", "web", "n1", "other"}
	requestPaths        = []string{"/", "/healthz", "/healthz/", "/healthz/etcd", "/healthzz", "/livez", "/readyz",
		"/apis", "/apis/", "/apis/apps/v1", "/api", "/api/v1", "/apiz", "/metrics", "/metrics/slis", "/version", "/*"}
)

// randomTest is any operator on any field it applies to.
func randomTest(c chooser) flowv1.AtomicTest {
	f := pick(c, scalarFields)
	switch c.intn(8) {
	case 0:
		return apitest.Equals(f, value(c, f))
	case 1:
		return apitest.NotEquals(f, value(c, f))
	case 2:
		return apitest.InSet(f, valueSet(c, f)...)
	case 3:
		return apitest.NotInSet(f, valueSet(c, f)...)
	case 4:
		return apitest.SuperSet(valueSet(c, flowv1.FieldGroups)...)
	case 5:
		return apitest.NotSuperSet(valueSet(c, flowv1.FieldGroups)...)
	case 6:
		return apitest.PatternMatch(f, patternFor(c, f))
	}
	return apitest.NotPatternMatch(f, patternFor(c, f))
}

// patternFor is a pattern of any list, often one written for f.
func patternFor(c chooser, f flowv1.RequestField) string {
	if c.intn(3) != 0 {
		return pick(c, fieldPatterns[f])
	}
	return pick(c, patterns)
}

// finiteTest is a positive test of f that usually has a finite language.
func finiteTest(c chooser, f flowv1.RequestField) flowv1.AtomicTest {
	switch c.intn(4) {
	case 0:
		return apitest.InSet(f, valueSet(c, f)...)
	case 1:
		return apitest.PatternMatch(f, patternFor(c, f))
	}
	return apitest.Equals(f, value(c, f))
}

// subjectTest names users or one group.
func subjectTest(c chooser) flowv1.AtomicTest {
	switch c.intn(4) {
	case 0:
		return apitest.SuperSet(value(c, flowv1.FieldGroups))
	case 1:
		return apitest.InSet(flowv1.FieldUser, valueSet(c, flowv1.FieldUser)...)
	case 2:
		return apitest.PatternMatch(flowv1.FieldUser, patternFor(c, flowv1.FieldUser))
	}
	return apitest.Equals(flowv1.FieldUser, value(c, flowv1.FieldUser))
}

// randomConjunction starts from a shape the native API can often express and adds any tests.
func randomConjunction(c chooser) flowv1.Conjunction {
	conj := apitest.And()
	add := func(t flowv1.AtomicTest) { conj.And = append(conj.And, t) }
	switch c.intn(12) {
	case 0, 1, 2, 3: // resource rule
		add(finiteTest(c, flowv1.FieldResource))
		if c.intn(5) > 0 {
			if c.intn(2) == 0 {
				add(apitest.Equals(flowv1.FieldSubresource, ""))
			} else {
				add(finiteTest(c, flowv1.FieldSubresource))
			}
		}
		for _, f := range []flowv1.RequestField{flowv1.FieldVerb, flowv1.FieldNamespace, flowv1.FieldAPIGroup} {
			if c.intn(2) == 0 {
				add(finiteTest(c, f))
			}
		}
	case 4, 5: // non-resource rule
		add(apitest.PatternMatch(flowv1.FieldPath, pick(c, fieldPatterns[flowv1.FieldPath])))
		if c.intn(2) == 0 {
			add(finiteTest(c, flowv1.FieldVerb))
		}
	case 6: // subjects only
		add(subjectTest(c))
	case 7: // every request
	default: // anything
		for range 1 + c.intn(3) {
			add(randomTest(c))
		}
	}
	if c.intn(2) == 0 {
		add(subjectTest(c))
	}
	if c.intn(2) == 0 { // a negation or pattern filtering a field that has a finite test
		var bounded []flowv1.RequestField
		for i := range conj.And {
			if f, positive := fieldOf(&conj.And[i]); positive && f != flowv1.FieldGroups {
				bounded = append(bounded, f)
			}
		}
		if len(bounded) > 0 {
			add(filterTest(c, pick(c, bounded)))
		}
	}
	if c.intn(3) == 0 {
		add(randomTest(c))
	}
	return conj
}

// filterTest is a negation or a pattern on f.
func filterTest(c chooser, f flowv1.RequestField) flowv1.AtomicTest {
	switch c.intn(4) {
	case 0:
		return apitest.NotEquals(f, value(c, f))
	case 1:
		return apitest.NotInSet(f, valueSet(c, f)...)
	case 2:
		return apitest.NotPatternMatch(f, patternFor(c, f))
	}
	return apitest.PatternMatch(f, patternFor(c, f))
}

func requestPriority(name string, level, queues, hand int32) flowv1.RequestPriority {
	spec := flowv1.RequestPrioritySpec{PriorityLevel: level}
	if level != 0 {
		// 50 a queue, fewer past validation's bound on queued requests (rp-wide's 1,025 queues).
		length := min(50, validation.MaxQueuedPerWidth/max(queues, 1))
		spec.AssuredConcurrencyShares, spec.QueuesPerWidth, spec.QueueLengthLimit = ptr.To[int32](10), ptr.To(queues), ptr.To(length)
		if queues > 1 {
			spec.HandSize = ptr.To(hand)
		}
	}
	return flowv1.RequestPriority{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}
}

func flowSchema(name string, matchingPriority int32, priority string, d *flowv1.FlowDistinguisher, match ...flowv1.Conjunction) flowv1.FlowSchema {
	return flowv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: flowv1.FlowSchemaSpec{
		MatchingPriority: matchingPriority, RequestPriority: flowv1.RequestPriorityReference{Name: priority},
		FlowDistinguisher: d, Match: append([]flowv1.Conjunction{}, match...)}}
}

// randomObjects builds RequestPriorities (sometimes one kube-apiserver's shuffle sharder cannot
// take: 1025 queues, hand 6, valid here) and FlowSchemas referring to them, to backstops or to
// nothing.
func randomObjects(c chooser) ([]flowv1.RequestPriority, []flowv1.FlowSchema) {
	var rps []flowv1.RequestPriority
	names := []string{effective.BackstopExemptName, effective.BackstopLowName, "missing"}
	if c.intn(2) == 0 {
		rps = append(rps, requestPriority("rp-top", 0, 0, 0))
	}
	for i := range 1 + c.intn(3) {
		q := pick(c, []int32{1, 8, 64, 128})
		rps = append(rps, requestPriority(fmt.Sprintf("rp-%d", i), int32(10*(i+1)), q, min(q, 1+int32(c.intn(8)))))
	}
	if c.intn(6) == 0 {
		rps = append(rps, requestPriority("rp-wide", 100, 1025, 6))
	}
	for _, rp := range rps {
		names = append(names, rp.Name, rp.Name, rp.Name, rp.Name, rp.Name)
	}
	var fss []flowv1.FlowSchema
	for i := range 1 + c.intn(8) {
		var d *flowv1.FlowDistinguisher
		switch c.intn(12) {
		case 0, 1:
			d = &flowv1.FlowDistinguisher{Source: flowv1.SourceUser}
		case 2:
			d = &flowv1.FlowDistinguisher{Source: flowv1.SourceNamespace}
		case 3:
			d = &flowv1.FlowDistinguisher{Source: flowv1.SourceUser, Transformation: &flowv1.Transformation{Regex: "(.*)"}}
		}
		var match []flowv1.Conjunction
		for range pick(c, []int{0, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3}) {
			match = append(match, randomConjunction(c))
		}
		fss = append(fss, flowSchema(fmt.Sprintf("fs-%02d", i), int32(c.intn(5)), pick(c, names), d, match...))
	}
	return rps, fss
}

func randomRequest(c chooser) *request.Attributes {
	return randomKind(c, c.intn(4) != 0)
}

// randomKind is a random resource request, or non-resource request.
func randomKind(c chooser, resource bool) *request.Attributes {
	a := &request.Attributes{User: pick(c, requestUsers)}
	if c.intn(8) == 0 {
		a.Groups = append(a.Groups, effective.MastersGroup)
	}
	for range c.intn(4) {
		a.Groups = append(a.Groups, pick(c, requestGroups))
	}
	if !resource {
		a.Verb, a.Path = pick(c, nonResourceVerbs), pick(c, requestPaths)
		return a
	}
	a.ResourceRequest = true
	a.Verb, a.APIGroup, a.Resource = pick(c, requestResourceVerbs), pick(c, requestAPIGroups), pick(c, requestResources)
	a.Subresource, a.Namespace, a.Name = pick(c, requestSubresources), pick(c, requestNamespaces), pick(c, requestNames)
	return a
}

// requestValues are the values a request's field may take: the requests' vocabulary and the
// tests' literals; fits tells which ones a request of a kind can have.
var requestValues = map[flowv1.RequestField][]string{
	flowv1.FieldUser:        union(requestUsers, testValues[flowv1.FieldUser], oddValues[flowv1.FieldUser]),
	flowv1.FieldVerb:        union(requestResourceVerbs, nonResourceVerbs, testValues[flowv1.FieldVerb], oddValues[flowv1.FieldVerb]),
	flowv1.FieldAPIGroup:    union(requestAPIGroups, testValues[flowv1.FieldAPIGroup], oddValues[flowv1.FieldAPIGroup]),
	flowv1.FieldResource:    union(requestResources, testValues[flowv1.FieldResource], oddValues[flowv1.FieldResource]),
	flowv1.FieldSubresource: union(requestSubresources, testValues[flowv1.FieldSubresource], oddValues[flowv1.FieldSubresource]),
	flowv1.FieldNamespace:   union(requestNamespaces, testValues[flowv1.FieldNamespace], oddValues[flowv1.FieldNamespace]),
	flowv1.FieldName:        union(requestNames, testValues[flowv1.FieldName], oddValues[flowv1.FieldName]),
	flowv1.FieldPath:        union(requestPaths, testValues[flowv1.FieldPath], oddValues[flowv1.FieldPath]),
}

func union(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		for _, v := range l {
			if !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	return out
}

// fits reports whether a request of a's kind can have value v in field f (the domain the
// projection assumes; see the top of the file).
func fits(a *request.Attributes, f flowv1.RequestField, v string) bool {
	switch f {
	case flowv1.FieldUser:
		return v != ""
	case flowv1.FieldVerb:
		return slices.Contains(requestResourceVerbs, v) && a.ResourceRequest || slices.Contains(nonResourceVerbs, v) && !a.ResourceRequest
	case flowv1.FieldPath:
		return strings.HasPrefix(v, "/") && !a.ResourceRequest
	case flowv1.FieldResource, flowv1.FieldSubresource:
		return !strings.Contains(v, "/") && a.ResourceRequest
	}
	return a.ResourceRequest
}

func setField(a *request.Attributes, f flowv1.RequestField, v string) {
	switch f {
	case flowv1.FieldUser:
		a.User = v
	case flowv1.FieldVerb:
		a.Verb = v
	case flowv1.FieldPath:
		a.Path = v
	case flowv1.FieldAPIGroup:
		a.APIGroup = v
	case flowv1.FieldResource:
		a.Resource = v
	case flowv1.FieldSubresource:
		a.Subresource = v
	case flowv1.FieldNamespace:
		a.Namespace = v
	case flowv1.FieldName:
		a.Name = v
	}
}

// setWhere sets field f of a to a value it can have for which want holds, if there is one.
func setWhere(c chooser, a *request.Attributes, f flowv1.RequestField, want func(string) bool) {
	var ok []string
	for _, v := range requestValues[f] {
		if fits(a, f, v) && want(v) {
			ok = append(ok, v)
		}
	}
	if len(ok) > 0 {
		setField(a, f, pick(c, ok))
	}
}

// aimedRequest is a request built to pass the tests of conj, then often changed in one
// attribute, so that requests fall on both sides of the FlowSchemas' boundaries (random
// requests rarely meet a conjunction of several tests).
func aimedRequest(c chooser, conj *flowv1.Conjunction) *request.Attributes {
	resource, path := false, false
	for i := range conj.And {
		f, positive := fieldOf(&conj.And[i])
		resource = resource || (positive && f != flowv1.FieldPath && f != flowv1.FieldUser && f != flowv1.FieldVerb &&
			f != flowv1.FieldGroups)
		path = path || (positive && f == flowv1.FieldPath)
	}
	isResource := c.intn(4) != 0
	if resource != path {
		isResource = resource
	}
	a := randomKind(c, isResource)
	for i := range conj.And {
		t := &conj.And[i]
		f, _ := fieldOf(t)
		switch {
		case t.SuperSet != nil:
			for _, g := range t.SuperSet.Set {
				if !slices.Contains(a.Groups, g) {
					a.Groups = append(a.Groups, g)
				}
			}
		case t.NotSuperSet != nil:
			if !ourTest(t, a) {
				drop := pick(c, t.NotSuperSet.Set)
				a.Groups = slices.DeleteFunc(slices.Clone(a.Groups), func(g string) bool { return g == drop })
			}
		default:
			if !ourTest(t, a) {
				setWhere(c, a, f, func(v string) bool {
					b := *a
					setField(&b, f, v)
					return ourTest(t, &b)
				})
			}
		}
	}
	if c.intn(3) != 0 { // step over a boundary
		f := pick(c, scalarFields)
		setWhere(c, a, f, func(string) bool { return true })
	}
	return a
}

// fieldOf is the field a test examines and whether the test is positive.
func fieldOf(t *flowv1.AtomicTest) (flowv1.RequestField, bool) {
	switch {
	case t.Equals != nil:
		return t.Equals.Field, true
	case t.NotEquals != nil:
		return t.NotEquals.Field, false
	case t.InSet != nil:
		return t.InSet.Field, true
	case t.NotInSet != nil:
		return t.NotInSet.Field, false
	case t.SuperSet != nil:
		return t.SuperSet.Field, true
	case t.NotSuperSet != nil:
		return t.NotSuperSet.Field, false
	case t.PatternMatch != nil:
		return t.PatternMatch.Field, true
	}
	return t.NotPatternMatch.Field, false
}

// requestSource makes requests for a configuration: a third random, the others aimed at one
// of its conjunctions.
type requestSource []*flowv1.Conjunction

func requestsFor(fss []flowv1.FlowSchema) requestSource {
	var conjs requestSource
	for i := range fss {
		for j := range fss[i].Spec.Match {
			conjs = append(conjs, &fss[i].Spec.Match[j])
		}
	}
	return conjs
}

func (s requestSource) next(c chooser) *request.Attributes {
	if len(s) > 0 && c.intn(3) != 0 {
		return aimedRequest(c, pick(c, s))
	}
	return randomRequest(c)
}

// randomRequests are n requests for the configuration fss.
func randomRequests(c chooser, fss []flowv1.FlowSchema, n int) []*request.Attributes {
	src := requestsFor(fss)
	out := make([]*request.Attributes, n)
	for i := range out {
		out[i] = src.next(c)
	}
	return out
}

// ---- the checks ----

type stats struct {
	configs, schemas, projected int
	notProjected                map[string]int // by reason
	// nontrivial counts the projected FlowSchemas that accept some of the requests and reject
	// others; pairs and accepted count the FlowSchema × request checks (backstop aside).
	nontrivial, pairs, accepted     int
	classified, classifiedProjected int
}

// checkBackstopLevelsUsed checks that every native level projected from a backstop (named
// "apf.<name>") is referred to by a native FlowSchema of the plan.
func checkBackstopLevelsUsed(t testing.TB, plan *native.Plan) {
	t.Helper()
	for _, plc := range plan.PriorityLevels {
		if !strings.HasPrefix(plc.Name, "apf.") {
			continue
		}
		if !slices.ContainsFunc(plan.FlowSchemas, func(fs flowcontrolv1.FlowSchema) bool {
			return fs.Spec.PriorityLevelConfiguration.Name == plc.Name
		}) {
			t.Fatalf("backstop level %s is projected, but no native FlowSchema refers to it", plc.Name)
		}
	}
}

// checkProjection projects cfg onto existing and checks the plan against every request.
func checkProjection(t testing.TB, cfg *effective.Config, existing native.Existing, reqs []*request.Attributes, st *stats) *native.Plan {
	t.Helper()
	plan := native.Project(cfg, existing)
	st.configs++
	if again := native.Project(cfg, existing); !reflect.DeepEqual(plan, again) {
		t.Fatalf("Project is not deterministic:\n%s\n%s", dump(plan), dump(again))
	}

	levels := map[string]bool{native.ExemptLevelName: true}
	levelOf := map[string]string{} // RequestPriority name -> native level
	for _, plc := range plan.PriorityLevels {
		if levels[plc.Name] {
			t.Fatalf("two native levels named %s", plc.Name)
		}
		levels[plc.Name] = true
		levelOf[strings.TrimPrefix(plc.Annotations[flowv1.AnnotationSource], native.KindRequestPriority+"/")] = plc.Name
	}
	for _, p := range cfg.Priorities {
		if p.Exempt() {
			levelOf[p.Name] = native.ExemptLevelName
		}
		if r, ok := plan.RequestPriorities[p.Name]; ok && r.Projected != (levelOf[p.Name] != "") {
			t.Fatalf("RequestPriority %s: Projected=%v, but native level %q", p.Name, r.Projected, levelOf[p.Name])
		}
	}

	bySource := map[string]*flowcontrolv1.FlowSchema{}
	for i := range plan.FlowSchemas {
		fs := &plan.FlowSchemas[i]
		src := fs.Annotations[flowv1.AnnotationSource]
		if bySource[src] != nil || slices.ContainsFunc(plan.FlowSchemas[:i], func(o flowcontrolv1.FlowSchema) bool {
			return o.Name == fs.Name
		}) {
			t.Fatalf("two native FlowSchemas with source %q or name %s", src, fs.Name)
		}
		bySource[src] = fs
		if problems := nativeProblems(fs, levels); len(problems) > 0 {
			t.Fatalf("native FlowSchema %s is not valid for kube-apiserver: %s\n%s", fs.Name, strings.Join(problems, "; "), dump(fs.Spec))
		}
	}

	type pair struct {
		schema *effective.Schema
		fs     *flowcontrolv1.FlowSchema
	}
	var pairs []pair
	projected := func(s *effective.Schema) *flowcontrolv1.FlowSchema {
		return bySource[native.Source(native.KindFlowSchema, s.Name)]
	}
	for _, s := range cfg.Schemas {
		st.schemas++
		res, ok := plan.FlowSchemaResults[s.Name]
		fs := projected(s)
		switch {
		case !ok:
			t.Fatalf("FlowSchema %s in effect has no Result", s.Name)
		case res.Projected != (fs != nil):
			t.Fatalf("FlowSchema %s: Projected=%v, native FlowSchema %v", s.Name, res.Projected, fs != nil)
		case !res.Projected:
			if res.Reason == "" || res.Message == "" {
				t.Fatalf("FlowSchema %s: not projected without reason or message: %+v", s.Name, res)
			}
			st.notProjected[res.Reason]++
			continue
		case fs.Name != res.NativeName:
			t.Fatalf("FlowSchema %s: NativeName %q, native FlowSchema %q", s.Name, res.NativeName, fs.Name)
		}
		st.projected++
		pairs = append(pairs, pair{s, fs})
	}
	catchAll := projected(cfg.CatchAll)
	if want := existing.Unmatched == native.UnmatchedOperator && levelOf[cfg.CatchAll.Priority.Name] != ""; want != (catchAll != nil) {
		t.Fatalf("backstop %s (unmatched %q): level %s projected %v, native FlowSchema %v", cfg.CatchAll.Name,
			existing.Unmatched, cfg.CatchAll.Priority.Name, want, catchAll != nil)
	}
	checkBackstopLevelsUsed(t, plan)
	if catchAll != nil {
		pairs = append(pairs, pair{cfg.CatchAll, catchAll})
	}
	if len(pairs) != len(plan.FlowSchemas) {
		t.Fatalf("%d native FlowSchemas, %d of them projected from FlowSchemas in effect", len(plan.FlowSchemas), len(pairs))
	}
	for _, p := range pairs {
		if want := levelOf[p.schema.Priority.Name]; p.fs.Spec.PriorityLevelConfiguration.Name != want {
			t.Fatalf("FlowSchema %s at RequestPriority %s: native level %q, want %q", p.schema.Name, p.schema.Priority.Name,
				p.fs.Spec.PriorityLevelConfiguration.Name, want)
		}
	}

	// Per schema: our conjunctions accept a request iff the native rules do.
	for _, p := range pairs {
		accepted := 0
		for _, a := range reqs {
			ours, theirs := ourAccepts(p.schema.Match, a), nativeAccepts(p.fs, a)
			if ours {
				accepted++
			}
			if ours != theirs {
				t.Fatalf("FlowSchema %s is projected, but for request %#v it accepts %v and its native FlowSchema %v\nmatch: %s\nnative rules: %s",
					p.schema.Name, *a, ours, theirs, dump(p.schema.Match), dump(p.fs.Spec.Rules))
			}
		}
		if !p.schema.Backstop {
			st.pairs, st.accepted = st.pairs+len(reqs), st.accepted+accepted
			if accepted > 0 && accepted < len(reqs) {
				st.nontrivial++
			}
		}
	}

	// Whole classification: kube-apiserver's first match is the projection of our choice.
	classifier := classify.Compile(cfg)
	if errs := classifier.Errors(); len(errs) > 0 {
		t.Fatal(errs)
	}
	order := nativeOrder(plan)
	var res classify.Result
	for _, a := range reqs {
		if slices.Contains(a.Groups, effective.MastersGroup) {
			continue
		}
		st.classified++
		classifier.Classify(a, &res)
		if want := firstSchema(cfg, a); res.Schema != want {
			t.Fatalf("request %#v: classifier chose %s, the reading of the specification %s", *a, res.Schema.Name, want.Name)
		}
		if projected(res.Schema) == nil {
			continue
		}
		st.classifiedProjected++
		got := "nothing"
		if fs := nativeFirstMatch(order, a); fs != nil {
			got = fmt.Sprintf("%s (source %q)", fs.Name, fs.Annotations[flowv1.AnnotationSource])
			if fs.Annotations[flowv1.AnnotationSource] == native.Source(native.KindFlowSchema, res.Schema.Name) {
				continue
			}
		}
		t.Fatalf("request %#v: classified to FlowSchema %s, projected, but kube-apiserver would choose %s\nnative order: %s",
			*a, res.Schema.Name, got, orderString(order))
	}
	return plan
}

// firstSchema is the first FlowSchema in effect whose match accepts a, or the catch-all.
func firstSchema(cfg *effective.Config, a *request.Attributes) *effective.Schema {
	for _, s := range cfg.Schemas {
		if ourAccepts(s.Match, a) {
			return s
		}
	}
	return cfg.CatchAll
}

func orderString(order []*flowcontrolv1.FlowSchema) string {
	parts := make([]string, len(order))
	for i, fs := range order {
		parts[i] = fmt.Sprintf("%d %s", fs.Spec.MatchingPrecedence, fs.Name)
	}
	return strings.Join(parts, ", ")
}

func dump(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// ---- the tests ----

// TestProjectionEquivalence projects random configurations, each twice (onto nothing, then
// onto the previous configuration's plan, so that kept precedences are exercised too), and
// checks every projected FlowSchema and the whole classification against random requests.
func TestProjectionEquivalence(t *testing.T) {
	const configs, requests = 300, 250
	rnd := randChooser{rand.New(rand.NewPCG(7, 11))}
	st := &stats{notProjected: map[string]int{}}
	// The share budget is not what this test checks: 90% lets the random levels be projected.
	roomy := int32(90)
	previous := native.Existing{MaxSeatLossPercent: &roomy}
	for i := range configs {
		// Every other configuration with the backstop projected (--native-unmatched=operator).
		unmatched := []native.Unmatched{native.UnmatchedKubeAPIServer, native.UnmatchedOperator}[i%2]
		previous.Unmatched = unmatched
		rps, fss := randomObjects(rnd)
		reqs := randomRequests(rnd, fss, requests)
		original := make([]flowv1.FlowSchema, len(fss))
		for i := range fss {
			fss[i].DeepCopyInto(&original[i])
		}
		cfg := effective.Compute(rps, fss)
		checkProjection(t, cfg, native.Existing{Unmatched: unmatched, MaxSeatLossPercent: &roomy}, reqs, st)
		plan := checkProjection(t, cfg, previous, reqs, st)
		previous = native.Existing{PriorityLevels: plan.PriorityLevels, FlowSchemas: plan.FlowSchemas, MaxSeatLossPercent: &roomy}
		if !reflect.DeepEqual(fss, original) {
			t.Fatalf("Project modified the configuration:\n%s\n%s", dump(fss), dump(original))
		}
	}
	notProjected := st.schemas - st.projected
	t.Logf("%d projections of %d configurations, %d requests each; %d FlowSchemas in effect: %d projected (%.0f%%; "+
		"%d accept some requests and reject others), %d not (%v); %d FlowSchema×request checks, %d accepted; "+
		"%d requests classified, %d of them to a projected FlowSchema", st.configs, configs, requests, st.schemas,
		st.projected, 100*float64(st.projected)/float64(st.schemas), st.nontrivial, notProjected, st.notProjected,
		st.pairs, st.accepted, st.classified, st.classifiedProjected)
	switch {
	case st.projected*5 < st.schemas:
		t.Errorf("only %d of %d FlowSchemas projected: the check is nearly vacuous", st.projected, st.schemas)
	case st.nontrivial*20 < st.schemas:
		t.Errorf("only %d of %d FlowSchemas projected and neither accept nor reject every request", st.nontrivial, st.schemas)
	case notProjected*10 < st.schemas:
		t.Errorf("only %d of %d FlowSchemas not projected: the generator misses what cannot be expressed", notProjected, st.schemas)
	case st.accepted*20 < st.pairs:
		t.Errorf("only %d of %d FlowSchema×request checks accepted: the requests miss the FlowSchemas", st.accepted, st.pairs)
	case st.notProjected[flowv1.ReasonNotExpressible] == 0 || st.notProjected[flowv1.ReasonRequestPriorityNotProjected] == 0:
		t.Errorf("reasons not exercised: %v", st.notProjected)
	case st.classifiedProjected*4 < st.classified:
		t.Errorf("only %d of %d requests classified to a projected FlowSchema", st.classifiedProjected, st.classified)
	}
}

// FuzzProjectionEquivalence runs the checks of TestProjectionEquivalence on a configuration and
// requests built from the fuzzer's bytes.
func FuzzProjectionEquivalence(f *testing.F) {
	f.Add([]byte{1, 2, 3, 0, 1, 0, 0, 5, 1, 0, 7}, []byte{1, 2, 3})
	f.Add([]byte{0, 0, 2, 4, 0, 0, 1, 0, 0, 0, 0, 2, 3, 0, 1}, []byte{3, 5, 1, 1, 1, 0, 2, 2, 4, 6, 8})
	f.Add([]byte("a configuration of several flow schemas and their conjunctions"), []byte("requests, resource and not"))
	f.Fuzz(func(t *testing.T, config, requests []byte) {
		rps, fss := randomObjects(&bytesChooser{config})
		src, rc := requestsFor(fss), &bytesChooser{requests}
		reqs := []*request.Attributes{src.next(rc)}
		for len(rc.b) > 0 && len(reqs) < 256 {
			reqs = append(reqs, src.next(rc))
		}
		// and requests the fuzzer does not choose, the same for the same input
		h := fnv.New64a()
		_, _ = h.Write(config)
		_, _ = h.Write(requests)
		reqs = append(reqs, randomRequests(randChooser{rand.New(rand.NewPCG(h.Sum64(), 1))}, fss, 64)...)
		checkProjection(t, effective.Compute(rps, fss), native.Existing{}, reqs, &stats{notProjected: map[string]int{}})
	})
}

// manyRequests is a fixed sample of requests for the example cases.
func manyRequests() []*request.Attributes {
	rnd := randChooser{rand.New(rand.NewPCG(3, 5))}
	reqs := make([]*request.Attributes, 1000)
	for i := range reqs {
		reqs[i] = randomRequest(rnd)
	}
	return reqs
}

// TestProjectionExamples checks that known expressible FlowSchemas are projected (and agree
// with their projection) and known inexpressible ones are not.
func TestProjectionExamples(t *testing.T) {
	resourceOf := func(extra ...flowv1.AtomicTest) flowv1.Conjunction {
		return apitest.And(append([]flowv1.AtomicTest{apitest.Equals(flowv1.FieldResource, "pods"), apitest.Equals(flowv1.FieldSubresource, "")}, extra...)...)
	}
	cases := []struct {
		name      string
		match     []flowv1.Conjunction
		d         *flowv1.FlowDistinguisher
		projected bool
		message   string // in the message when not projected
	}{
		{name: "user, verbs, resource, namespace", projected: true, match: []flowv1.Conjunction{apitest.And(
			apitest.Equals(flowv1.FieldUser, "alice"), apitest.InSet(flowv1.FieldVerb, "get", "list"), apitest.Equals(flowv1.FieldResource, "pods"),
			apitest.Equals(flowv1.FieldSubresource, ""), apitest.Equals(flowv1.FieldNamespace, "ns1"))}},
		{name: "every request", projected: true, match: []flowv1.Conjunction{apitest.And()}},
		{name: "nothing", projected: true, match: []flowv1.Conjunction{}},
		{name: "one group", projected: true, match: []flowv1.Conjunction{apitest.And(apitest.SuperSet("team-x"))}},
		{name: "finite patterns", projected: true, match: []flowv1.Conjunction{apitest.And(
			apitest.PatternMatch(flowv1.FieldVerb, "get|list"), apitest.PatternMatch(flowv1.FieldResource, "pods|leases"),
			apitest.PatternMatch(flowv1.FieldSubresource, "status|"), apitest.PatternMatch(flowv1.FieldNamespace, "kube-(system|public)"))}},
		{name: "verb negation on resource requests", projected: true, match: []flowv1.Conjunction{
			resourceOf(apitest.NotInSet(flowv1.FieldVerb, "get", "list", "watch", ""))}},
		{name: "every verb but the empty one", projected: true, match: []flowv1.Conjunction{
			resourceOf(apitest.PatternMatch(flowv1.FieldVerb, ".+"))}},
		{name: "two verb negations, one of the empty verb", projected: true, match: []flowv1.Conjunction{
			resourceOf(apitest.NotEquals(flowv1.FieldVerb, ""), apitest.NotEquals(flowv1.FieldVerb, "get"))}},
		{name: "the empty verb among every verb", projected: true, match: []flowv1.Conjunction{
			resourceOf(apitest.InSet(flowv1.FieldVerb, "", "get", "list", "watch", "create", "update", "patch", "delete",
				"deletecollection", "proxy"))}},
		{name: "the empty resource", projected: true, match: []flowv1.Conjunction{apitest.And(
			apitest.InSet(flowv1.FieldResource, "", "pods"), apitest.InSet(flowv1.FieldSubresource, "", "status"))}},
		{name: "filtered prefix", projected: true, match: []flowv1.Conjunction{apitest.And(
			apitest.InSet(flowv1.FieldUser, "system:controller:gc", "alice"), apitest.PatternMatch(flowv1.FieldUser, "system:controller:.*"))}},
		{name: "path subtree", projected: true, match: []flowv1.Conjunction{apitest.And(apitest.PatternMatch(flowv1.FieldPath, "/healthz(/.*)?"),
			apitest.InSet(flowv1.FieldVerb, "get", "patch"))}},
		{name: "path prefix", projected: true, match: []flowv1.Conjunction{apitest.And(apitest.PatternMatch(flowv1.FieldPath, "/apis/.*"))}},
		{name: "negation on an absent field", projected: true, match: []flowv1.Conjunction{apitest.And(
			apitest.PatternMatch(flowv1.FieldPath, "/metrics(/.*)?"), apitest.NotEquals(flowv1.FieldName, "web"))}},
		{name: "cluster scope", projected: true, match: []flowv1.Conjunction{
			apitest.And(apitest.InSet(flowv1.FieldResource, "nodes", "namespaces"), apitest.Equals(flowv1.FieldSubresource, ""), apitest.Equals(flowv1.FieldNamespace, ""))}},

		{name: "name test", message: "name", match: []flowv1.Conjunction{resourceOf(apitest.Equals(flowv1.FieldName, "web"))}},
		{name: "unbounded user pattern", message: "unbounded", match: []flowv1.Conjunction{
			apitest.And(apitest.PatternMatch(flowv1.FieldUser, "tenant-[a-z]+"))}},
		{name: "user negation", message: "unbounded", match: []flowv1.Conjunction{apitest.And(apitest.NotEquals(flowv1.FieldUser, "alice"))}},
		{name: "resource without subresource", message: "subresource", match: []flowv1.Conjunction{
			apitest.And(apitest.Equals(flowv1.FieldResource, "pods"))}},
		{name: "subresource without resource", message: "subresource", match: []flowv1.Conjunction{
			apitest.And(apitest.Equals(flowv1.FieldSubresource, "status"))}},
		{name: "path equality", message: "path", match: []flowv1.Conjunction{apitest.And(apitest.Equals(flowv1.FieldPath, "/healthz"))}},
		{name: "path negation", message: "unbounded", match: []flowv1.Conjunction{apitest.And(apitest.NotPatternMatch(flowv1.FieldPath, "/apis/.*"))}},
		{name: "notSuperSet", message: "notSuperSet", match: []flowv1.Conjunction{apitest.And(apitest.NotSuperSet("team-x"))}},
		{name: "two groups", message: "group", match: []flowv1.Conjunction{apitest.And(apitest.SuperSet("team-x", "team-y"))}},
		{name: "user and group", message: "both", match: []flowv1.Conjunction{apitest.And(apitest.SuperSet("team-x"), apitest.Equals(flowv1.FieldUser, "alice"))}},
		{name: "namespace not a DNS label", message: "DNS", match: []flowv1.Conjunction{resourceOf(apitest.Equals(flowv1.FieldNamespace, "NS_1"))}},
		{name: "literal * user", message: "wildcard", match: []flowv1.Conjunction{apitest.And(apitest.Equals(flowv1.FieldUser, "*"))}},
		{name: "verb negation allowing the empty verb", message: `verb ""`, match: []flowv1.Conjunction{
			resourceOf(apitest.NotInSet(flowv1.FieldVerb, "get", "list", "watch"))}},
		{name: "the empty verb alone", message: `verb ""`, match: []flowv1.Conjunction{resourceOf(apitest.Equals(flowv1.FieldVerb, ""))}},
		{name: "every resource but the empty one", message: "every resource but the empty one", match: []flowv1.Conjunction{
			apitest.And(apitest.PatternMatch(flowv1.FieldResource, ".+"))}},
		{name: "resource not empty", message: "every resource but the empty one", match: []flowv1.Conjunction{
			apitest.And(apitest.NotEquals(flowv1.FieldResource, ""), apitest.Equals(flowv1.FieldSubresource, ""))}},
		{name: "non-resource verb post", message: "POST", match: []flowv1.Conjunction{apitest.And(apitest.Equals(flowv1.FieldVerb, "post"))}},
		{name: "transformation", message: "transformation", d: &flowv1.FlowDistinguisher{Source: flowv1.SourceUser,
			Transformation: &flowv1.Transformation{Regex: "(.*)"}}, match: []flowv1.Conjunction{apitest.And()}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rps := []flowv1.RequestPriority{requestPriority("rp", 10, 64, 6)}
			fss := []flowv1.FlowSchema{flowSchema("fs", 1, "rp", c.d, c.match...)}
			reqs := append(manyRequests(), randomRequests(randChooser{rand.New(rand.NewPCG(5, 8))}, fss, 1000)...)
			cfg := effective.Compute(rps, fss)
			if st := cfg.FlowSchemaStatus["fs"]; !st.InEffect {
				t.Fatalf("not in effect: %s", st.Message)
			}
			st := &stats{notProjected: map[string]int{}}
			plan := checkProjection(t, cfg, native.Existing{}, reqs, st)
			res := plan.FlowSchemaResults["fs"]
			if res.Projected != c.projected || (!c.projected && !strings.Contains(res.Message, c.message)) {
				t.Fatalf("Result %+v, want Projected=%v (message with %q)", res, c.projected, c.message)
			}
			if c.projected && st.accepted == 0 && len(c.match) > 0 {
				t.Fatalf("no sample request is accepted: the example proves nothing")
			}
		})
	}
}

// TestProjectionExampleRules pins the native rule of the documented example.
func TestProjectionExampleRules(t *testing.T) {
	cfg := effective.Compute([]flowv1.RequestPriority{requestPriority("rp", 10, 64, 6)}, []flowv1.FlowSchema{
		flowSchema("fs", 1, "rp", nil, apitest.And(apitest.Equals(flowv1.FieldUser, "alice"), apitest.InSet(flowv1.FieldVerb, "list", "get"),
			apitest.Equals(flowv1.FieldResource, "pods"), apitest.Equals(flowv1.FieldSubresource, ""), apitest.Equals(flowv1.FieldNamespace, "ns1")))})
	plan := native.Project(cfg, native.Existing{})
	want := []flowcontrolv1.PolicyRulesWithSubjects{{
		Subjects: []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: "alice"}}},
		ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"get", "list"}, APIGroups: []string{"*"},
			Resources: []string{"pods"}, Namespaces: []string{"ns1"}}},
	}}
	for _, fs := range plan.FlowSchemas {
		if fs.Name == native.NativeName("fs") {
			if got := dump(fs.Spec.Rules); got != dump(want) {
				t.Fatalf("rules %s, want %s", got, dump(want))
			}
			return
		}
	}
	t.Fatalf("not projected: %+v", plan.FlowSchemaResults["fs"])
}

// TestProjectionRegressions keeps the cases the equivalence test found, each with a request on
// which the projection disagreed (or the native object kube-apiserver rejected).
func TestProjectionRegressions(t *testing.T) {
	resourceReq := func(user, verb, resource, subresource string, groups ...string) *request.Attributes {
		return &request.Attributes{User: user, Groups: groups, Verb: verb, Resource: resource, Subresource: subresource,
			Namespace: "ns1", ResourceRequest: true}
	}
	cases := []struct {
		name      string
		match     flowv1.Conjunction
		request   *request.Attributes
		projected bool
		message   string          // in the message when not projected
		rules     json.RawMessage // the native rules when projected
	}{{
		// resources() appended the subresource to the resource in place, so the next
		// subresource was joined to "pods/status": only the first pair was listed.
		name: "subresource set including the object itself", projected: true,
		match:   apitest.And(apitest.Equals(flowv1.FieldResource, "pods"), apitest.PatternMatch(flowv1.FieldSubresource, "status|")),
		request: resourceReq("alice", "get", "pods", ""),
		rules: json.RawMessage(`[{"subjects":[{"kind":"Group","group":{"name":"*"}}],"resourceRules":[{"verbs":["*"],` +
			`"apiGroups":["*"],"resources":["pods","pods/status"],"clusterScope":true,"namespaces":["*"]}]}]`),
	}, {
		name: "two subresources", projected: true,
		match:   apitest.And(apitest.InSet(flowv1.FieldResource, "pods", "leases"), apitest.InSet(flowv1.FieldSubresource, "status", "log")),
		request: resourceReq("alice", "get", "pods", "log"),
		rules: json.RawMessage(`[{"subjects":[{"kind":"Group","group":{"name":"*"}}],"resourceRules":[{"verbs":["*"],` +
			`"apiGroups":["*"],"resources":["leases/log","leases/status","pods/log","pods/status"],"clusterScope":true,` +
			`"namespaces":["*"]}]}]`),
	}, {
		// A verb no resource request has left a resource rule with no verbs, which
		// kube-apiserver rejects ("verbs must contain at least one value").
		name: "resource rule without a resource verb", projected: true,
		match: apitest.And(apitest.Equals(flowv1.FieldVerb, "post"), apitest.Equals(flowv1.FieldResource, "pods"),
			apitest.Equals(flowv1.FieldSubresource, "")),
		request: resourceReq("alice", "create", "pods", ""),
		rules:   json.RawMessage(`null`),
	}, {
		// superSet ["*"] became the group subject "*", which matches every user.
		name: "group named *", message: "wildcard", match: apitest.And(apitest.SuperSet("*")),
		request: resourceReq("bob", "get", "pods", "", "team-x"),
	}, {
		// superSet [""] became a group subject without a name, which kube-apiserver rejects.
		name: "group named with the empty string", message: "non-empty group name", match: apitest.And(apitest.SuperSet("")),
		request: resourceReq("bob", "get", "pods", "", ""),
	}, {
		// U+FFFD in a pattern also matches a byte that is not UTF-8: "\xff" is no user
		// subject's name.
		name: "pattern with U+FFFD", message: "unbounded", match: apitest.And(apitest.PatternMatch(flowv1.FieldUser, `alice|\x{FFFD}`)),
		request: resourceReq("\xff", "get", "pods", ""),
	}, {
		name: "class with U+FFFD", message: "unbounded", match: apitest.And(
			apitest.PatternMatch(flowv1.FieldAPIGroup, `apps|[\x{FFF0}-\x{FFFF}]`), apitest.Equals(flowv1.FieldResource, "pods"),
			apitest.Equals(flowv1.FieldSubresource, "")),
		request: &request.Attributes{User: "alice", Verb: "get", APIGroup: "\xff", Resource: "pods", ResourceRequest: true},
	}, {
		// A surrogate in a pattern matches nothing, but string(rune) of it is "\uFFFD".
		name: "pattern with a surrogate", message: "unbounded", match: apitest.And(apitest.PatternMatch(flowv1.FieldUser, `bob|\x{D800}`)),
		request: resourceReq("\uFFFD", "get", "pods", ""),
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fss := []flowv1.FlowSchema{flowSchema("fs", 1, "rp", nil, c.match)}
			cfg := effective.Compute([]flowv1.RequestPriority{requestPriority("rp", 10, 64, 6)}, fss)
			reqs := append([]*request.Attributes{c.request}, randomRequests(randChooser{rand.New(rand.NewPCG(9, 9))}, fss, 500)...)
			plan := checkProjection(t, cfg, native.Existing{}, reqs, &stats{notProjected: map[string]int{}})
			res := plan.FlowSchemaResults["fs"]
			if res.Projected != c.projected || (!c.projected && !strings.Contains(res.Message, c.message)) {
				t.Fatalf("Result %+v, want Projected=%v (message with %q)", res, c.projected, c.message)
			}
			for _, fs := range plan.FlowSchemas {
				if got := dump(fs.Spec.Rules); fs.Name == native.NativeName("fs") && got != string(c.rules) {
					t.Fatalf("native rules %s, want %s", got, c.rules)
				}
			}
		})
	}
}

// TestProjectionSingleTests sweeps the operators: every literal and pattern with every operator
// on every field, alone, completed into a resource rule, and bounded by a finite set of
// values, each against requests that take every value of the field.
func TestProjectionSingleTests(t *testing.T) {
	resourceRule := []flowv1.AtomicTest{apitest.Equals(flowv1.FieldResource, "pods"), apitest.Equals(flowv1.FieldSubresource, "")}
	completion := map[flowv1.RequestField][]flowv1.AtomicTest{
		flowv1.FieldResource:    {apitest.InSet(flowv1.FieldSubresource, "", "status")},
		flowv1.FieldSubresource: {apitest.InSet(flowv1.FieldResource, "pods", "leases", "Pods")},
		flowv1.FieldPath:        nil,
	}
	allGroups := union(testGroups, oddGroups, requestGroups)
	bases := []*request.Attributes{
		{User: "alice", Groups: []string{"team-x"}, Verb: "get", Resource: "pods", Namespace: "ns1", Name: "web", ResourceRequest: true},
		{User: "bob", Groups: []string{"system:authenticated"}, Verb: "list", APIGroup: "apps", Resource: "leases",
			Subresource: "status", ResourceRequest: true},
		{User: "carol", Groups: []string{"team-y"}, Verb: "get", Path: "/healthz"},
		{User: "alice", Verb: "post", Path: "/apis/apps/v1"},
	}
	for _, f := range append([]flowv1.RequestField{flowv1.FieldGroups}, scalarFields...) {
		t.Run(string(f), func(t *testing.T) {
			var tests []flowv1.AtomicTest
			if f == flowv1.FieldGroups {
				for i, g := range allGroups {
					h := allGroups[(i+1)%len(allGroups)]
					tests = append(tests, apitest.SuperSet(g), apitest.NotSuperSet(g), apitest.SuperSet(g, h), apitest.NotSuperSet(g, h))
				}
			} else {
				values := requestValues[f]
				for i, v := range values {
					w := values[(i+3)%len(values)]
					tests = append(tests, apitest.Equals(f, v), apitest.NotEquals(f, v), apitest.InSet(f, v, w), apitest.NotInSet(f, v, w))
				}
				for _, p := range union(patterns, fieldPatterns[f]) {
					tests = append(tests, apitest.PatternMatch(f, p), apitest.NotPatternMatch(f, p))
				}
			}
			complete, ok := completion[f]
			if !ok {
				complete = resourceRule
			}
			var bound []flowv1.AtomicTest // a finite set of the values resource requests have
			if f != flowv1.FieldGroups && f != flowv1.FieldPath {
				var values []string
				for _, v := range requestValues[f] {
					if fits(bases[0], f, v) {
						values = append(values, v)
					}
				}
				bound = []flowv1.AtomicTest{apitest.InSet(f, values...)}
			}
			var fss []flowv1.FlowSchema
			for i, test := range tests {
				variants := [][]flowv1.AtomicTest{{test}, append([]flowv1.AtomicTest{test}, complete...)}
				if bound != nil {
					variants = append(variants, append([]flowv1.AtomicTest{test, bound[0]}, complete...))
				}
				for j, v := range variants {
					fss = append(fss, flowSchema(fmt.Sprintf("t-%03d-%d", i, j), int32(i), "rp", nil, apitest.And(v...)))
				}
			}
			var reqs []*request.Attributes
			for _, base := range bases {
				if f == flowv1.FieldGroups {
					for i := range allGroups {
						for j := i; j < len(allGroups); j++ {
							a := *base
							a.Groups = union([]string{allGroups[i]}, []string{allGroups[j]})
							reqs = append(reqs, &a)
						}
					}
					continue
				}
				for _, v := range requestValues[f] {
					if fits(base, f, v) {
						a := *base
						setField(&a, f, v)
						reqs = append(reqs, &a)
					}
				}
			}
			reqs = append(reqs, randomRequests(randChooser{rand.New(rand.NewPCG(1, 1))}, fss, 100)...)
			cfg := effective.Compute([]flowv1.RequestPriority{requestPriority("rp", 10, 64, 6)}, fss)
			st := &stats{notProjected: map[string]int{}}
			checkProjection(t, cfg, native.Existing{}, reqs, st)
			// A schema that can only match system:masters, at this queued level, is overridden by
			// the implicit system-top and not in effect.
			inEffect := len(fss)
			for i := range fss {
				if validation.MastersOnly(fss[i].Spec.Match) {
					inEffect--
				}
			}
			if st.schemas != inEffect || st.nontrivial == 0 {
				t.Fatalf("%d of %d FlowSchemas in effect, %d projected and accepting some requests only", st.schemas,
					inEffect, st.nontrivial)
			}
			t.Logf("%d FlowSchemas, %d projected (%d accepting some requests only), %d requests", st.schemas,
				st.projected, st.nontrivial, len(reqs))
		})
	}
}

// mandatoryExempt is kube-apiserver's mandatory exempt FlowSchema.
func mandatoryExempt() *flowcontrolv1.FlowSchema {
	for _, fs := range bootstrapset.MandatoryFlowSchemas() {
		if fs.Name == flowcontrolv1.FlowSchemaNameExempt {
			return &fs
		}
	}
	panic("no mandatory exempt FlowSchema")
}
