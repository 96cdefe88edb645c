package manifest

import "testing"

// TestExcludeMatches: a glob matches the whole path, any trailing part or the base name.
func TestExcludeMatches(t *testing.T) {
	for _, c := range []struct {
		rel  string
		glob string
		want bool
	}{
		{"app/templates/x.yaml", "templates/*", true},
		{"app/templates/crds", "templates/*", true},
		{"app/templates/crds/x.yaml", "templates/*", false}, // its directory is excluded instead
		{"app/values.yaml", "templates/*", false},
		{"a/b/x.tpl.yaml", "*.tpl.yaml", true},
		{"a/b/x.yaml", "*.tpl.yaml", false},
		{"a/b", "./a/b/", true},
		{"x/a/b", "a/b", true},
		{"ab/c", "b/c", false},
	} {
		if got := excluded(c.rel, []string{c.glob}); got != c.want {
			t.Errorf("excluded(%q, %q) = %v, want %v", c.rel, c.glob, got, c.want)
		}
	}
}
