package crdschema

import (
	"context"
	"sort"
	"strings"
	"testing"

	utiljson "k8s.io/apimachinery/pkg/util/json"

	"sigs.k8s.io/yaml"
)

func validate(t *testing.T, doc string) []string {
	t.Helper()
	data, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any // numbers as the API server decodes them: int64 when integral
	if err := utiljson.Unmarshal(data, &obj); err != nil {
		t.Fatal(err)
	}
	errs, known, err := Validate(context.Background(), obj["apiVersion"].(string), obj["kind"].(string), obj)
	if err != nil || !known {
		t.Fatalf("Validate: known %v, %v", known, err)
	}
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	sort.Strings(out) // the schema validator walks maps in random order
	return out
}

// Two wrong-typed fields are two errors in Kubernetes' words, with no Go type names.
func TestTypeErrorsPerField(t *testing.T) {
	got := validate(t, `
apiVersion: flowcontrol.apf-operator.io/v1alpha1
kind: RequestPriority
metadata: {name: x}
spec: {priorityLevel: "high", assuredConcurrencyShares: 10, queuesPerWidth: 8, handSize: "8", queueLengthLimit: 50}
`)
	want := []string{
		`spec.handSize: Invalid value: "string": spec.handSize in body must be of type integer: "string"`,
		`spec.priorityLevel: Invalid value: "string": spec.priorityLevel in body must be of type integer: "string"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The CRDs' CEL rules run when the schema passes.
func TestCELRules(t *testing.T) {
	got := validate(t, `
apiVersion: flowcontrol.apf-operator.io/v1alpha1
kind: EventRateLimit
metadata: {name: x}
spec: {limits: [{type: Server, qps: 0, burst: 1}]}
`)
	if len(got) != 1 || !strings.HasPrefix(got[0], "spec.limits[0]") {
		t.Errorf("got %q, want one error on spec.limits[0]", got)
	}
}

// A kind no embedded CRD serves is not known.
func TestUnknownKind(t *testing.T) {
	_, known, err := Validate(context.Background(), "flowcontrol.apf-operator.io/v1alpha1", "Nope", map[string]any{})
	if known || err != nil {
		t.Errorf("known %v, err %v", known, err)
	}
}
