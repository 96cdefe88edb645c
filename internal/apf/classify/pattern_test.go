package classify

import (
	"regexp"
	"testing"
)

func TestSpecialize(t *testing.T) {
	cases := []struct {
		expr    string
		kind    patternKind
		literal string
	}{
		{".*", patternAny, ""},
		{"system:serviceaccount:.*", patternPrefix, "system:serviceaccount:"},
		{".*-controller", patternSuffix, "-controller"},
		{"nodes", patternLiteral, "nodes"},
		{`kube\.system`, patternLiteral, "kube.system"},
		{"(?i)nodes", patternRegexp, ""},
		{"(?s).*", patternRegexp, ""},
		{"^system:.*$", patternRegexp, ""},
		{"a|b", patternRegexp, ""},
		{"tenant-[a-z]+", patternRegexp, ""},
		{"(x).*", patternRegexp, ""},
	}
	for _, c := range cases {
		p := specialize(c.expr, nil)
		if p.kind != c.kind || p.literal != c.literal {
			t.Errorf("specialize(%q) = kind %d literal %q; want kind %d literal %q", c.expr, p.kind, p.literal, c.kind, c.literal)
		}
	}
}

func FuzzPattern(f *testing.F) {
	for _, s := range [][2]string{{".*", "a\nb"}, {"system:.*", "system:x"}, {".*x", "\xffx"}, {"\ufffd", "\xff"},
		{"ab", "ab"}, {"a.*", "a\n"}, {"(?i)A", "a"}, {".*\ufffd", "a\xff"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, expr, v string) {
		cache := patternCache{}
		re, err := cache.compile(expr)
		if err != nil {
			return
		}
		p := specialize(expr, re)
		if got, want := p.match(v), regexp.MustCompile(`^(?:`+expr+`)$`).MatchString(v); got != want {
			t.Fatalf("pattern %q (kind %d) on %q: %v, regexp says %v", expr, p.kind, v, got, want)
		}
	})
}
