package effective

import (
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
)

// digestObjects is a configuration that uses every part of a spec the digest covers.
func digestObjects() ([]flowv1.RequestPriority, []flowv1.FlowSchema) {
	top, high, low := rp("top", 0, 0, 1), rp("high", 10, 30, 2), rp("low", 20, 10, 3)
	high.Spec.LendablePercent = ptr(25)
	high.Spec.BorrowingLimitPercent = ptr(50)
	users := fs("users", "high", 100)
	users.Spec.FlowDistinguisher = &flowv1.FlowDistinguisher{Source: flowv1.SourceUser,
		Transformation: &flowv1.Transformation{Regex: "^(.*)@example.com$"}}
	users.Spec.Match = []flowv1.Conjunction{
		{And: []flowv1.AtomicTest{
			{InSet: &flowv1.SetTest{Field: "verb", Set: []string{"get", "list", "watch"}}},
			{SuperSet: &flowv1.SetTest{Field: "groups", Set: []string{"dev", "ops"}}},
		}},
		{And: []flowv1.AtomicTest{{PatternMatch: &flowv1.PatternTest{Field: "path", Pattern: "/healthz.*"}}}},
	}
	batch := fs("batch", "low", 200)
	batch.Spec.Match = []flowv1.Conjunction{{And: []flowv1.AtomicTest{
		{Equals: &flowv1.ValueTest{Field: "namespace", Value: "batch"}}}}}
	return rps(top, high, low), fss(users, batch)
}

func digestOf(rps []flowv1.RequestPriority, fss []flowv1.FlowSchema) string {
	return Compute(rps, fss).Digest()
}

func TestDigestFormat(t *testing.T) {
	d := digestOf(digestObjects())
	if !regexp.MustCompile(`^sha256:[0-9a-f]{64}$`).MatchString(d) {
		t.Fatalf("digest %q is not sha256:<64 hex digits>", d)
	}
	if empty := digestOf(nil, nil); empty == d {
		t.Fatalf("the empty configuration has the digest of a full one: %s", d)
	}
}

// TestDigestIgnoresWhatIsNotConfiguration: object order, identity, versions, creation times
// (that decide no conflict), metadata and status leave the digest alone.
func TestDigestIgnoresWhatIsNotConfiguration(t *testing.T) {
	want := digestOf(digestObjects())
	rps, fss := digestObjects()
	slices.Reverse(rps)
	slices.Reverse(fss)
	if got := digestOf(rps, fss); got != want {
		t.Errorf("reversed object order: digest %s, want %s", got, want)
	}
	for i := range rps {
		touchMeta(&rps[i].ObjectMeta, i)
		rps[i].Status = flowv1.RequestPriorityStatus{FlowSchemas: 7, AssuredConcurrencyFraction: "0.5",
			Conditions: []metav1.Condition{{Type: flowv1.ConditionReady, Status: metav1.ConditionTrue, Reason: "Accepted"}}}
	}
	for i := range fss {
		touchMeta(&fss[i].ObjectMeta, i)
		fss[i].Status = flowv1.FlowSchemaStatus{
			Conditions: []metav1.Condition{{Type: flowv1.ConditionReady, Status: metav1.ConditionFalse, Reason: "X"}}}
	}
	if got := digestOf(rps, fss); got != want {
		t.Errorf("other UIDs, resourceVersions, generations, creation times, labels and status: digest %s, want %s", got, want)
	}
}

func touchMeta(m *metav1.ObjectMeta, i int) {
	m.UID = types.UID("uid-" + strconv.Itoa(i))
	m.ResourceVersion = strconv.Itoa(1000 + i)
	m.Generation = int64(5 + i)
	m.CreationTimestamp = metav1.NewTime(epoch.Add(time.Duration(100-i) * time.Hour))
	m.Labels = map[string]string{"app.kubernetes.io/instance": "cluster-" + strconv.Itoa(i)}
	m.Annotations = map[string]string{"argocd.argoproj.io/tracking-id": "x" + strconv.Itoa(i)}
}

// TestDigestEqualForEqualConfigurations: the same meaning written in another order.
func TestDigestEqualForEqualConfigurations(t *testing.T) {
	want := digestOf(digestObjects())
	rps, fss := digestObjects()
	users := &fss[0].Spec
	slices.Reverse(users.Match)
	slices.Reverse(users.Match[1].And)
	users.Match[1].And[1].InSet.Set = []string{"watch", "get", "list", "get"}
	users.Match[1].And[0].SuperSet.Set = []string{"ops", "dev"}
	if got := digestOf(rps, fss); got != want {
		t.Errorf("conjunctions, tests and set values in another order: digest %s, want %s", got, want)
	}
}

// TestDigestChangesWithEverySpecField: every spec field that decides classification or
// concurrency changes the digest, and so does adding or removing an object.
func TestDigestChangesWithEverySpecField(t *testing.T) {
	base := digestOf(digestObjects())
	cases := map[string]func(rps []flowv1.RequestPriority, fss []flowv1.FlowSchema) ([]flowv1.RequestPriority, []flowv1.FlowSchema){
		"RequestPriority name": rpChange(func(s *flowv1.RequestPriority) { s.Name = "higher" }),
		"priorityLevel":        rpChange(func(s *flowv1.RequestPriority) { s.Spec.PriorityLevel = 11 }),
		"assuredConcurrencyShares": rpChange(func(s *flowv1.RequestPriority) {
			s.Spec.AssuredConcurrencyShares = ptr(31)
		}),
		"queuesPerWidth":         rpChange(func(s *flowv1.RequestPriority) { s.Spec.QueuesPerWidth = ptr(65) }),
		"handSize":               rpChange(func(s *flowv1.RequestPriority) { s.Spec.HandSize = ptr(7) }),
		"queueLengthLimit":       rpChange(func(s *flowv1.RequestPriority) { s.Spec.QueueLengthLimit = ptr(51) }),
		"lendablePercent":        rpChange(func(s *flowv1.RequestPriority) { s.Spec.LendablePercent = ptr(26) }),
		"lendablePercent 0":      rpChange(func(s *flowv1.RequestPriority) { s.Spec.LendablePercent = ptr(0) }),
		"lendablePercent absent": rpChange(func(s *flowv1.RequestPriority) { s.Spec.LendablePercent = nil }),
		"borrowingLimitPercent":  rpChange(func(s *flowv1.RequestPriority) { s.Spec.BorrowingLimitPercent = ptr(51) }),
		"borrowingLimit absent":  rpChange(func(s *flowv1.RequestPriority) { s.Spec.BorrowingLimitPercent = nil }),
		"FlowSchema name":        fsChange(func(s *flowv1.FlowSchema) { s.Name = "people" }),
		"matchingPriority":       fsChange(func(s *flowv1.FlowSchema) { s.Spec.MatchingPriority = 101 }),
		"requestPriority":        fsChange(func(s *flowv1.FlowSchema) { s.Spec.RequestPriority.Name = "low" }),
		"transformation removed": fsChange(func(s *flowv1.FlowSchema) { s.Spec.FlowDistinguisher.Transformation = nil }),
		"distinguisher removed":  fsChange(func(s *flowv1.FlowSchema) { s.Spec.FlowDistinguisher = nil }),
		"transformation regex":   fsChange(func(s *flowv1.FlowSchema) { s.Spec.FlowDistinguisher.Transformation.Regex = "^(.*)$" }),
		"set value":              fsChange(func(s *flowv1.FlowSchema) { s.Spec.Match[0].And[0].InSet.Set[2] = "create" }),
		"set value added":        fsChange(func(s *flowv1.FlowSchema) { appendSet(s.Spec.Match[0].And[0].InSet, "create") }),
		"test field":             fsChange(func(s *flowv1.FlowSchema) { s.Spec.Match[0].And[0].InSet.Field = "resource" }),
		"test operator":          fsChange(func(s *flowv1.FlowSchema) { swapInSet(&s.Spec.Match[0].And[0]) }),
		"pattern":                fsChange(func(s *flowv1.FlowSchema) { s.Spec.Match[1].And[0].PatternMatch.Pattern = "/livez.*" }),
		"test removed":           fsChange(func(s *flowv1.FlowSchema) { s.Spec.Match[0].And = s.Spec.Match[0].And[:1] }),
		"conjunction removed":    fsChange(func(s *flowv1.FlowSchema) { s.Spec.Match = s.Spec.Match[:1] }),
		"RequestPriority added": func(r []flowv1.RequestPriority, f []flowv1.FlowSchema) ([]flowv1.RequestPriority, []flowv1.FlowSchema) {
			return append(r, rp("extra", 30, 5, 4)), f
		},
		"FlowSchema removed": func(r []flowv1.RequestPriority, f []flowv1.FlowSchema) ([]flowv1.RequestPriority, []flowv1.FlowSchema) {
			return r, f[1:]
		},
		"older duplicate takes the level": func(r []flowv1.RequestPriority, f []flowv1.FlowSchema) ([]flowv1.RequestPriority, []flowv1.FlowSchema) {
			return append(r, rp("usurper", 10, 99, 0)), f
		},
	}
	seen := map[string]string{base: "base"}
	for name, change := range cases {
		cfg := Compute(change(digestObjects()))
		if name != "older duplicate takes the level" {
			requireAllInEffect(t, name, cfg)
		}
		d := cfg.Digest()
		if d == base {
			t.Errorf("%s: the digest did not change", name)
		} else if other, dup := seen[d]; dup {
			t.Errorf("%s: the same digest as %s", name, other)
		}
		seen[d] = name
	}
}

// TestDigestLeavesOutIgnoredObjects: an object not in effect (here a FlowSchema naming a
// missing RequestPriority) changes nothing that is enforced, so not the digest either; its
// Ready=False shows in the objects metric instead.
func TestDigestLeavesOutIgnoredObjects(t *testing.T) {
	rps, fss := digestObjects()
	want := digestOf(rps, fss)
	if got := digestOf(rps, append(fss, fs("dangling", "missing", 300))); got != want {
		t.Errorf("an ignored FlowSchema changed the digest: %s, want %s", got, want)
	}
}

// requireAllInEffect fails when a change made an object ignored: the case would then test
// what ignoring does, not the field it changed.
func requireAllInEffect(t *testing.T, name string, cfg *Config) {
	t.Helper()
	for _, statuses := range []map[string]Status{cfg.RequestPriorityStatus, cfg.FlowSchemaStatus} {
		for object, st := range statuses {
			if !st.InEffect {
				t.Errorf("%s: %s is not in effect (%s: %s)", name, object, st.Reason, st.Message)
			}
		}
	}
}

func rpChange(f func(*flowv1.RequestPriority)) func([]flowv1.RequestPriority, []flowv1.FlowSchema) ([]flowv1.RequestPriority, []flowv1.FlowSchema) {
	return func(r []flowv1.RequestPriority, s []flowv1.FlowSchema) ([]flowv1.RequestPriority, []flowv1.FlowSchema) {
		f(&r[1]) // "high", referenced by "users"
		if r[1].Name != "high" {
			s[0].Spec.RequestPriority.Name = r[1].Name
		}
		return r, s
	}
}

func fsChange(f func(*flowv1.FlowSchema)) func([]flowv1.RequestPriority, []flowv1.FlowSchema) ([]flowv1.RequestPriority, []flowv1.FlowSchema) {
	return func(r []flowv1.RequestPriority, s []flowv1.FlowSchema) ([]flowv1.RequestPriority, []flowv1.FlowSchema) {
		f(&s[0]) // "users"
		return r, s
	}
}

func appendSet(s *flowv1.SetTest, v string) { s.Set = append(s.Set, v) }

func swapInSet(t *flowv1.AtomicTest) { t.NotInSet, t.InSet = t.InSet, nil }

// BenchmarkDigest10000 digests a configuration of 100 levels and 10,000 FlowSchemas (the
// scale goal), once per snapshot in the operator.
func BenchmarkDigest10000(b *testing.B) {
	var rs []flowv1.RequestPriority
	for i := range 100 {
		rs = append(rs, rp("rp-"+strconv.Itoa(i), int32(i), 10, i))
	}
	var fs_ []flowv1.FlowSchema
	_, base := digestObjects()
	for i := range 10000 {
		f := *base[0].DeepCopy()
		f.Name = "fs-" + strconv.Itoa(i)
		f.Spec.MatchingPriority = int32(i)
		f.Spec.RequestPriority.Name = "rp-" + strconv.Itoa(1+i%99)
		fs_ = append(fs_, f)
	}
	cfg := Compute(rs, fs_)
	if len(cfg.Schemas) != 10000 {
		b.Fatalf("%d schemas in effect, want 10000", len(cfg.Schemas))
	}
	b.ResetTimer()
	for b.Loop() {
		_ = cfg.Digest()
	}
}
