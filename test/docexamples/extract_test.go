package docexamples

import "testing"

// TestExtract finds the operator's documents in YAML blocks and shell here-documents, with
// their page lines, and skips other blocks and other API groups.
func TestExtract(t *testing.T) {
	page := "# Page\n" +
		"```yaml\n" +
		"apiVersion: flowcontrol.apf-operator.io/v1alpha1\nkind: RequestPriority\nmetadata: {name: a}\nspec: {priorityLevel: 7}\n" +
		"---\n" +
		"apiVersion: v1\nkind: ConfigMap\n" +
		"```\n" +
		"```sh\n" +
		"kubectl apply -f - <<'EOF'\n" +
		"apiVersion: flowcontrol.apf-operator.io/v1alpha1\nkind: RequestPriority\nmetadata: {name: b}\nspec:\n  lendablePercent: 5\n" +
		"EOF\n" +
		"```\n" +
		"```text\napiVersion: flowcontrol.apf-operator.io/v1alpha1\nkind: FlowSchema\n```\n"
	docs := Extract(page)
	if len(docs) != 2 {
		t.Fatalf("found %d documents, want 2: %+v", len(docs), docs)
	}
	if docs[0].Line != 3 || docs[0].Kind != "RequestPriority" || docs[0].Patch() {
		t.Errorf("first: %+v, want a RequestPriority at line 3 that is no patch", docs[0])
	}
	if docs[1].Line != 13 || !docs[1].Patch() {
		t.Errorf("second: %+v, want the here-document's patch at line 13", docs[1])
	}
}
