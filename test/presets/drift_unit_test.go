package presets_test

import (
	"reflect"
	"testing"
)

// TestDrift: the drift check sees what a GitOps diff sees: null, an empty list and an absent
// field differ; numbers compare across YAML's float64 and the API's int64; fields only the
// live object has are ignored.
func TestDrift(t *testing.T) {
	for _, tc := range []struct {
		name      string
		want, got map[string]any
		drift     []string
	}{
		{"null vs absent", map[string]any{"namespaces": nil}, map[string]any{},
			[]string{".namespaces: manifest <nil>, live absent"}},
		{"empty list vs null", map[string]any{"namespaces": []any{}}, map[string]any{"namespaces": nil},
			[]string{".namespaces: manifest []interface {}{}, live <nil>"}},
		{"numbers", map[string]any{"n": float64(8)}, map[string]any{"n": int64(8)}, nil},
		{"server-set field ignored", map[string]any{"a": "x"}, map[string]any{"a": "x", "uid": "1"}, nil},
		{"nested value", map[string]any{"a": []any{map[string]any{"b": "x"}}}, map[string]any{"a": []any{map[string]any{"b": "y"}}},
			[]string{`.a[0].b: manifest "x", live "y"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := drift("", tc.want, tc.got); !reflect.DeepEqual(got, tc.drift) {
				t.Errorf("drift = %q; want %q", got, tc.drift)
			}
		})
	}
}
