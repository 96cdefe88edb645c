package defaults

import "testing"

// TestByName finds every default by its name and nothing under another name.
func TestByName(t *testing.T) {
	for _, want := range RequestPriorities() {
		if got, ok := RequestPriority(want.Name); !ok || got.Name != want.Name || got.Spec.PriorityLevel != want.Spec.PriorityLevel {
			t.Errorf("RequestPriority(%q) = %q, %t", want.Name, got.Name, ok)
		}
	}
	for _, want := range FlowSchemas() {
		if got, ok := FlowSchema(want.Name); !ok || got.Name != want.Name || got.Spec.MatchingPriority != want.Spec.MatchingPriority {
			t.Errorf("FlowSchema(%q) = %q, %t", want.Name, got.Name, ok)
		}
	}
	if _, ok := RequestPriority("no-such-default"); ok {
		t.Error("RequestPriority found a default named no-such-default")
	}
	if _, ok := FlowSchema("no-such-default"); ok {
		t.Error("FlowSchema found a default named no-such-default")
	}
}
