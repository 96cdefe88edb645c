package classify_test

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"testing"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/classify"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apf/request"
	"github.com/apf-operator/apf-operator/internal/apf/shufflesharding"
	"github.com/apf-operator/apf-operator/internal/apitest"
)

// The reference classifier: a literal reading of the specification, scanning every schema and
// conjunction in order, written independently of the indexed Classifier.

func refAttribute(a *request.Attributes, f flowv1.RequestField) (string, bool) {
	resource := map[flowv1.RequestField]string{flowv1.FieldAPIGroup: a.APIGroup, flowv1.FieldResource: a.Resource,
		flowv1.FieldSubresource: a.Subresource, flowv1.FieldNamespace: a.Namespace, flowv1.FieldName: a.Name}
	if v, ok := resource[f]; ok {
		return v, a.ResourceRequest
	}
	switch f {
	case flowv1.FieldUser:
		return a.User, true
	case flowv1.FieldVerb:
		return a.Verb, true
	case flowv1.FieldPath:
		return a.Path, !a.ResourceRequest
	}
	panic("unexpected field " + f)
}

func refTest(t *flowv1.AtomicTest, a *request.Attributes) bool {
	switch {
	case t.Equals != nil:
		v, ok := refAttribute(a, t.Equals.Field)
		return ok && v == t.Equals.Value
	case t.NotEquals != nil:
		v, ok := refAttribute(a, t.NotEquals.Field)
		return !(ok && v == t.NotEquals.Value)
	case t.InSet != nil:
		v, ok := refAttribute(a, t.InSet.Field)
		return ok && slices.Contains(t.InSet.Set, v)
	case t.NotInSet != nil:
		v, ok := refAttribute(a, t.NotInSet.Field)
		return !(ok && slices.Contains(t.NotInSet.Set, v))
	case t.SuperSet != nil:
		for _, g := range t.SuperSet.Set {
			if !slices.Contains(a.Groups, g) {
				return false
			}
		}
		return true
	case t.NotSuperSet != nil:
		for _, g := range t.NotSuperSet.Set {
			if !slices.Contains(a.Groups, g) {
				return true
			}
		}
		return false
	case t.PatternMatch != nil:
		v, ok := refAttribute(a, t.PatternMatch.Field)
		return ok && regexp.MustCompile("^(?:"+t.PatternMatch.Pattern+")$").MatchString(v)
	case t.NotPatternMatch != nil:
		v, ok := refAttribute(a, t.NotPatternMatch.Field)
		return !(ok && regexp.MustCompile("^(?:"+t.NotPatternMatch.Pattern+")$").MatchString(v))
	}
	panic("no operator")
}

func refDistinguisher(s *effective.Schema, a *request.Attributes) string {
	if s.Distinguisher == nil {
		return ""
	}
	v := a.User
	if s.Distinguisher.Source == flowv1.SourceNamespace {
		if !a.ResourceRequest {
			return ""
		}
		v = a.Namespace
	}
	if tr := s.Distinguisher.Transformation; tr != nil {
		m := regexp.MustCompile("^(?:" + tr.Regex + ")$").FindStringSubmatch(v)
		if m == nil {
			return ""
		}
		return m[1]
	}
	return v
}

type refResult struct {
	schema        string
	conjunction   int
	distinguisher string
	width         int
	longRunning   bool
}

func refClassify(cfg *effective.Config, a *request.Attributes) refResult {
	width := 2
	if a.Verb == "get" || a.Verb == "list" || a.Verb == "watch" {
		width = 1
	}
	long := a.IsLongRunning()
	if slices.Contains(a.Groups, effective.MastersGroup) { // ahead of every FlowSchema
		return refResult{cfg.MastersBackstop.Name, -1, refDistinguisher(cfg.MastersBackstop, a), width, long}
	}
	for _, s := range cfg.Schemas {
		for ci, c := range s.Match {
			ok := true
			for ti := range c.And {
				ok = ok && refTest(&c.And[ti], a)
			}
			if ok {
				return refResult{s.Name, ci, refDistinguisher(s, a), width, long}
			}
		}
	}
	s := cfg.CatchAll
	return refResult{s.Name, -1, refDistinguisher(s, a), width, long}
}

// A random source for configurations and requests: a fuzzer's bytes or a seeded generator.
type chooser interface{ intn(n int) int }

type bytesChooser struct{ b []byte }

func (c *bytesChooser) intn(n int) int {
	if len(c.b) == 0 {
		return 0
	}
	v := int(c.b[0])
	c.b = c.b[1:]
	return v % n
}

type randChooser struct{ r *rand.Rand }

func (c randChooser) intn(n int) int { return c.r.IntN(n) }

// Small vocabularies, so that random tests and requests meet often.
var (
	vocab = map[flowv1.RequestField][]string{
		flowv1.FieldUser:        {"alice", "bob", "tenant-a-x", "system:serviceaccount:ns1:sa", "system:node:n1", ""},
		flowv1.FieldVerb:        {"get", "list", "watch", "create", "delete", "post"},
		flowv1.FieldAPIGroup:    {"", "apps", "coordination.k8s.io"},
		flowv1.FieldResource:    {"pods", "nodes", "leases", ""},
		flowv1.FieldSubresource: {"", "status", "exec"},
		flowv1.FieldNamespace:   {"", "ns1", "kube-system"},
		flowv1.FieldName:        {"", "web", "n1"},
		flowv1.FieldPath:        {"/healthz", "/metrics", "/api"},
	}
	groupVocab = []string{"system:masters", "system:authenticated", "system:nodes", "team-x", "team-y"}
	patterns   = []string{".*", "system:.*", "tenant-[a-z]+-.*", "n[0-9]", "", "a|b|alice", "(pods|nodes)", "[a-z]*"}
	transforms = []string{`^(tenant-[a-z]+)-.*$`, `(a)lice|(b)ob`, `x(y)?`, `(.*)`}
	scalars    = []flowv1.RequestField{flowv1.FieldUser, flowv1.FieldVerb, flowv1.FieldAPIGroup, flowv1.FieldResource,
		flowv1.FieldSubresource, flowv1.FieldNamespace, flowv1.FieldName, flowv1.FieldPath}
)

func pick[T any](c chooser, from []T) T { return from[c.intn(len(from))] }

func pickSet(c chooser, from []string) []string {
	n := 1 + c.intn(3)
	set := make([]string, n)
	for i := range set {
		set[i] = pick(c, from)
	}
	return set
}

func randomTest(c chooser) flowv1.AtomicTest {
	f := pick(c, scalars)
	switch c.intn(8) {
	case 0:
		return apitest.Equals(f, pick(c, vocab[f]))
	case 1:
		return apitest.NotEquals(f, pick(c, vocab[f]))
	case 2:
		return apitest.InSet(f, pickSet(c, vocab[f])...)
	case 3:
		return apitest.NotInSet(f, pickSet(c, vocab[f])...)
	case 4:
		return apitest.SuperSet(pickSet(c, groupVocab)...)
	case 5:
		return apitest.NotSuperSet(pickSet(c, groupVocab)...)
	case 6:
		return apitest.PatternMatch(f, pick(c, patterns))
	}
	return apitest.NotPatternMatch(f, pick(c, patterns))
}

func randomConfig(c chooser, schemas int) *effective.Config {
	cfg := effective.Compute(nil, nil)
	for i := 0; i < schemas; i++ {
		s := &effective.Schema{Name: fmt.Sprintf("fs-%03d", i), MatchingPriority: int32(i), Priority: cfg.CatchAll.Priority}
		if c.intn(3) == 0 {
			s.Distinguisher = &flowv1.FlowDistinguisher{Source: pick(c, []flowv1.DistinguisherSource{flowv1.SourceUser, flowv1.SourceNamespace})}
			if c.intn(2) == 0 {
				s.Distinguisher.Transformation = &flowv1.Transformation{Regex: pick(c, transforms)}
			}
		}
		for range c.intn(4) {
			conj := apitest.And()
			for range c.intn(4) {
				conj.And = append(conj.And, randomTest(c))
			}
			s.Match = append(s.Match, conj)
		}
		cfg.Schemas = append(cfg.Schemas, s)
	}
	return cfg
}

func randomRequest(c chooser) *request.Attributes {
	a := &request.Attributes{User: pick(c, vocab[flowv1.FieldUser]), Verb: pick(c, vocab[flowv1.FieldVerb]),
		ResourceRequest: c.intn(4) != 0}
	for range c.intn(4) {
		a.Groups = append(a.Groups, pick(c, groupVocab))
	}
	if a.ResourceRequest {
		a.APIGroup, a.Resource = pick(c, vocab[flowv1.FieldAPIGroup]), pick(c, vocab[flowv1.FieldResource])
		a.Subresource, a.Namespace = pick(c, vocab[flowv1.FieldSubresource]), pick(c, vocab[flowv1.FieldNamespace])
		a.Name = pick(c, vocab[flowv1.FieldName])
	} else {
		a.Path = pick(c, vocab[flowv1.FieldPath])
	}
	a.LongRunning = c.intn(10) == 0
	return a
}

func compareWithReference(t *testing.T, cfg *effective.Config, c *classify.Classifier, a *request.Attributes) {
	t.Helper()
	var r classify.Result
	c.Classify(a, &r)
	got := refResult{r.Schema.Name, r.Conjunction, r.Distinguisher, r.Width, r.LongRunning}
	if want := refClassify(cfg, a); got != want {
		t.Fatalf("request %+v:\n indexed   %+v\n reference %+v", *a, got, want)
	}
	if h := shufflesharding.Hash(r.Schema.Name, r.Distinguisher); r.FlowHash != h {
		t.Fatalf("request %+v: FlowHash = %#x, want Hash(%q, %q) = %#x", *a, r.FlowHash, r.Schema.Name, r.Distinguisher, h)
	}
}

func TestClassifierMatchesReference(t *testing.T) {
	rnd := randChooser{rand.New(rand.NewPCG(1, 2))}
	for round := 0; round < 300; round++ {
		cfg := randomConfig(rnd, 1+rnd.intn(40))
		c := classify.Compile(cfg)
		if len(c.Errors()) > 0 {
			t.Fatal(c.Errors())
		}
		for i := 0; i < 100; i++ {
			compareWithReference(t, cfg, c, randomRequest(rnd))
		}
	}
}

func FuzzClassifier(f *testing.F) {
	f.Add([]byte{3, 1, 2, 0, 1, 2, 3, 4, 5, 6, 7}, []byte{1, 2, 3})
	f.Add([]byte("configuration bytes"), []byte("request"))
	f.Fuzz(func(t *testing.T, config, req []byte) {
		cc := &bytesChooser{config}
		cfg := randomConfig(cc, cc.intn(16))
		c := classify.Compile(cfg)
		if len(c.Errors()) > 0 {
			t.Fatal(c.Errors())
		}
		rc := &bytesChooser{req}
		for len(rc.b) > 0 {
			compareWithReference(t, cfg, c, randomRequest(rc))
		}
		compareWithReference(t, cfg, c, randomRequest(rc))
	})
}

// TestClassifierMatchesReferenceLargeIndex repeats the comparison with vocabularies larger
// than the index's linear-scan limit, so that values are filed in maps rather than short
// lists, and mixes of both kinds of fields occur.
func TestClassifierMatchesReferenceLargeIndex(t *testing.T) {
	savedUsers, savedGroups := vocab[flowv1.FieldUser], groupVocab
	defer func() { vocab[flowv1.FieldUser], groupVocab = savedUsers, savedGroups }()
	vocab[flowv1.FieldUser] = append(append([]string(nil), savedUsers...), largeVocab("user", 20)...)
	groupVocab = append(append([]string(nil), savedGroups...), largeVocab("group", 20)...)
	rnd := randChooser{rand.New(rand.NewPCG(3, 4))}
	for round := 0; round < 100; round++ {
		cfg := randomConfig(rnd, 20+rnd.intn(60))
		c := classify.Compile(cfg)
		if len(c.Errors()) > 0 {
			t.Fatal(c.Errors())
		}
		for i := 0; i < 100; i++ {
			compareWithReference(t, cfg, c, randomRequest(rnd))
		}
	}
}

func largeVocab(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", prefix, i)
	}
	return out
}
