package dispatch

import (
	"fmt"
	"testing"

	"github.com/apf-operator/apf-operator/internal/apf/effective"
)

// TestFlowTableFindsEverySchema: every schema put in the table is found with its own flow,
// whatever the table's size, and schemas never put (or nil) are not.
func TestFlowTableFindsEverySchema(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 10, 1000, 4097} {
		schemas := make([]*effective.Schema, n)
		flows := make([]*flow, n)
		table := newFlowTable(n)
		for i := range schemas {
			schemas[i] = &effective.Schema{Name: fmt.Sprintf("s%d", i)}
			flows[i] = &flow{level: &level{name: schemas[i].Name}}
			table.put(schemas[i], flows[i])
		}
		for i, s := range schemas {
			if got := table.get(s); got == nil || got.level != flows[i].level {
				t.Fatalf("n=%d: schema %d maps to %v, want the flow of level %p", n, i, got, flows[i].level)
			}
		}
		for range 100 {
			if got := table.get(&effective.Schema{}); got != nil {
				t.Fatalf("n=%d: an unknown schema maps to %p", n, got)
			}
		}
		if got := table.get(nil); got != nil {
			t.Fatalf("n=%d: nil maps to %p", n, got)
		}
		if n > 0 {
			replaced := &flow{level: &level{}}
			table.put(schemas[0], replaced)
			if got := table.get(schemas[0]); got == nil || got.level != replaced.level {
				t.Fatalf("n=%d: put did not replace the flow of an existing schema", n)
			}
		}
	}
}
