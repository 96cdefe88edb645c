package validate

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apf-operator/apf-operator/internal/manifest"
)

// manyObjects is a stream of one RequestPriority and n FlowSchemas referring to it.
func manyObjects(n int) string {
	var b strings.Builder
	b.WriteString(rpDoc)
	for i := range n {
		fmt.Fprintf(&b, "---\napiVersion: flowcontrol.apf-operator.io/v1alpha1\nkind: FlowSchema\n"+
			"metadata: {name: s%05d}\nspec: {matchingPriority: %d, requestPriority: {name: p}, "+
			"match: [{and: [{equals: {field: user, value: u%d}}]}]}\n", i, i, i)
	}
	return b.String()
}

// oneFlowSchema decodes the FlowSchema of manyObjects(1).
func oneFlowSchema(b *testing.B) manifest.Object {
	objs, findings := manifest.Decode(manifest.Document{File: "x", Line: 1, Data: []byte(manyObjects(1)[len(rpDoc)+len("---\n"):])})
	if len(objs) != 1 || len(findings) != 0 {
		b.Fatalf("%d objects, %v", len(objs), findings)
	}
	return objs[0]
}

// BenchmarkRun validates 2,001 objects from standard input, end to end.
func BenchmarkRun(b *testing.B) {
	stream := manyObjects(2000)
	for b.Loop() {
		if code := Run([]string{"-f", "-"}, strings.NewReader(stream), io.Discard, io.Discard); code != ExitOK {
			b.Fatalf("exit %d", code)
		}
	}
}

// BenchmarkSchemaErrors is the CRD schema and CEL check of one FlowSchema.
func BenchmarkSchemaErrors(b *testing.B) {
	fs := oneFlowSchema(b)
	for b.Loop() {
		if errs, err := schemaErrors(context.Background(), fs); err != nil || len(errs) != 0 {
			b.Fatalf("%v %v", errs, err)
		}
	}
}

// BenchmarkRules is the webhook rules' check of the same FlowSchema, for comparison.
func BenchmarkRules(b *testing.B) {
	fs := oneFlowSchema(b)
	rp, _ := manifest.Decode(manifest.Document{File: "y", Line: 1, Data: []byte(rpDoc)})
	set := newSet(append(rp, fs), make([]field.ErrorList, 2))
	for b.Loop() {
		if errs, _ := rules(context.Background(), fs, set); len(errs) != 0 {
			b.Fatalf("%v", errs)
		}
	}
}
