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

// TestLanguageLimits checks the per-pattern limits: a finite language over 256 values or
// 64 KiB is not listed and says so (tooLarge), and each size is known before it is built.
func TestLanguageLimits(t *testing.T) {
	cases := []struct {
		pattern  string
		values   int // 0: not listed, too large
		tooLarge bool
	}{
		{"(a|b){8}", 256, false},
		{"(a|b){9}", 0, true},
		{"x{1000}[a-p]", 16, false},
		{"x{1000}[a-p][a-p]", 0, true},    // 256 values of 1,002 bytes: 250 KiB
		{`[a-z\x{100}-\x{1FF}]`, 0, true}, // 282 runes
		{"[a-p]x{1000}[a-p]", 0, true},
		{"(x{1000}){1}y{1000}z{1000}w{1000}", 1, false},
		{"(ab|cd|ef|gh)(ab|cd|ef|gh)(ab|cd|ef|gh)(ab|cd|ef|gh)", 256, false},
		{"(ab|cd|ef|gh)(ab|cd|ef|gh)(ab|cd|ef|gh)(ab|cd|ef|gh)(a|b)", 0, true},
		{"[a-z]+", 0, false},
	}
	for _, c := range cases {
		lang, ok := analyzePattern(c.pattern)
		switch {
		case c.values > 0 && (!ok || !lang.finite || len(lang.values) != c.values):
			t.Errorf("analyzePattern(%q) = %d values, %v; want %d values", c.pattern, len(lang.values), ok, c.values)
		case c.values == 0 && (ok || lang.tooLarge != c.tooLarge):
			t.Errorf("analyzePattern(%q) = ok %v, tooLarge %v; want not listed, tooLarge %v", c.pattern, ok, lang.tooLarge, c.tooLarge)
		}
	}
}
