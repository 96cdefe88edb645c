package native

import (
	"regexp"
	"slices"
	"testing"
)

func TestAnalyzePattern(t *testing.T) {
	cases := []struct {
		pattern string
		want    language
		ok      bool
	}{
		{".*", language{all: true}, true},
		{"(.*)", language{all: true}, true},
		{"(?s).*", language{all: true}, true},
		{"pods", language{finite: true, values: []string{"pods"}}, true},
		{"get|list", language{finite: true, values: []string{"get", "list"}}, true},
		{"kube-(system|public)", language{finite: true, values: []string{"kube-system", "kube-public"}}, true},
		{"pods?", language{finite: true, values: []string{"pod", "pods"}}, true},
		{"v[12]", language{finite: true, values: []string{"v1", "v2"}}, true},
		{"(?i)pods", language{}, false},
		{"(?i)123", language{finite: true, values: []string{"123"}}, true},
		{"/apis/.*", language{prefix: true, base: "/apis/"}, true},
		{"system:controller:.*", language{prefix: true, base: "system:controller:"}, true},
		{"/healthz(/.*)?", language{subtree: true, base: "/healthz"}, true},
		{"tenant-[a-z]+", language{}, false},
		{"[a-z]*", language{}, false},
		{"^pods$", language{finite: true, values: []string{"pods"}}, true},
		{"^(get|list)$", language{finite: true, values: []string{"get", "list"}}, true},
		{"^system:controller:.*$", language{prefix: true, base: "system:controller:"}, true},
		{"^$", language{finite: true, values: []string{""}}, true},
		{"a^b", language{}, false},
		{"^a|b$", language{}, false},
		{".+", language{all: true, nonEmpty: true}, true},
	}
	for _, c := range cases {
		got, ok := analyzePattern(c.pattern)
		if ok != c.ok || got.all != c.want.all || got.nonEmpty != c.want.nonEmpty || got.finite != c.want.finite || got.prefix != c.want.prefix ||
			got.subtree != c.want.subtree || got.base != c.want.base || !sameSet(got.values, c.want.values) {
			t.Errorf("analyzePattern(%q) = %+v, %v; want %+v, %v", c.pattern, got, ok, c.want, c.ok)
		}
	}
}

// TestAnalyzePatternAgreesWithRegexp checks every recognised language against the regexp
// itself on probe strings: a finite language accepts exactly its values, a prefix or subtree
// exactly the strings of its form.
func TestAnalyzePatternAgreesWithRegexp(t *testing.T) {
	patterns := []string{"get|list", "^(get|list)$", "^/healthz(/.*)?$", "^$", "kube-(system|public)", "pods?", "v[12]", "/apis/.*", "/healthz(/.*)?",
		"a(b|c)(d|e)", "(x)(y)?", "system:controller:.*"}
	probes := []string{"", "get", "list", "gets", "kube-system", "kube-public", "kube-", "pod", "pods", "podss",
		"v1", "v2", "v3", "/apis/", "/apis", "/apis/apps/v1", "/healthz", "/healthz/", "/healthz/etcd",
		"/healthzz", "abd", "ace", "abe", "x", "xy", "xyy", "system:controller:gc", "system:controller"}
	for _, p := range patterns {
		lang, ok := analyzePattern(p)
		if !ok {
			t.Fatalf("analyzePattern(%q) not recognised", p)
		}
		re := regexp.MustCompile(`^(?:` + p + `)$`)
		for _, v := range probes {
			if got, want := lang.accepts(v), re.MatchString(v); got != want {
				t.Errorf("pattern %q, value %q: language accepts %v, regexp %v", p, v, got, want)
			}
		}
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
