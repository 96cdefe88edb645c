package gitops_test

import (
	"strings"
	"testing"
)

// TestHealthScriptEdgeCases covers statuses the operator does not write but a cluster may
// hold (an older operator, a hand edit): the script must still return a valid verdict, never
// fail, and never call an object Healthy without a True Ready of the current generation.
func TestHealthScriptEdgeCases(t *testing.T) {
	script, err := readHealthScript()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, manifest, want, mention string
	}{
		{"no metadata.generation", `{kind: RequestPriority, metadata: {name: a}, status: {observedGeneration: 1,
			conditions: [{type: Ready, status: "True", reason: Accepted}]}}`, "Healthy", "Accepted"},
		{"status without conditions", `{kind: FlowSchema, metadata: {name: a, generation: 1}, status: {observedGeneration: 1}}`,
			"Progressing", "Ready"},
		{"Ready Unknown", `{kind: FlowSchema, metadata: {name: a, generation: 1}, status: {observedGeneration: 1,
			conditions: [{type: Ready, status: Unknown, reason: Whatever}]}}`, "Progressing", "Ready"},
		{"Ready False without reason or message", `{kind: FlowSchema, metadata: {name: a, generation: 1},
			status: {observedGeneration: 1, conditions: [{type: Ready, status: "False"}]}}`, "Degraded", "NoReason"},
		{"observedGeneration ahead", `{kind: RequestPriority, metadata: {name: a, generation: 1}, status: {observedGeneration: 2,
			conditions: [{type: Ready, status: "True", reason: Accepted}]}}`, "Progressing", "generation 1"},
		{"Projected Unknown", `{kind: RequestPriority, metadata: {name: a, generation: 1}, status: {observedGeneration: 1,
			conditions: [{type: Ready, status: "True", reason: Accepted}, {type: Projected, status: Unknown, reason: X}]}}`,
			"Progressing", "Projected=Unknown, X"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, err := runArgoHealth(script, decodeManifests(t, tc.manifest)[0])
			if err != nil {
				t.Fatal(err)
			}
			if h.Status != tc.want || !strings.Contains(h.Message, tc.mention) {
				t.Errorf("got %s, want %s mentioning %q", h, tc.want, tc.mention)
			}
		})
	}
}
