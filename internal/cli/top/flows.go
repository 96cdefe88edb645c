package top

import (
	"cmp"
	"slices"

	"github.com/apf-operator/apf-operator/internal/apfmetrics"
)

// Columns of dump_requests (k8s.io/apiserver pkg/util/flowcontrol/apf_controller_debug.go;
// "FlowDistingsher" is spelled so there).
const (
	colLevel         = "PriorityLevelName"
	colSchema        = "FlowSchemaName"
	colIndexInQueue  = "RequestIndexInQueue"
	colDistinguisher = "FlowDistingsher"
	colUser          = "UserName"
)

// maxUsersPerFlow bounds the users listed for one flow.
const maxUsersPerFlow = 3

// flowsOf groups the rows of dump_requests by flow (FlowSchema, distinguisher). A request
// whose index in its queue is -1 is executing; any other value is queued.
func flowsOf(rows []apfmetrics.Row, owners Owners) []Flow {
	type key struct{ level, schema, dist string }
	byKey := map[key]*Flow{}
	users := map[key]map[string]bool{}
	for _, row := range rows {
		k := key{row[colLevel], row[colSchema], row[colDistinguisher]}
		if k.schema == "" && k.level == "" {
			continue
		}
		f := byKey[k]
		if f == nil {
			f = &Flow{FlowSchema: k.schema, Source: owners.Schemas[k.schema], PriorityLevel: k.level, Distinguisher: k.dist}
			byKey[k], users[k] = f, map[string]bool{}
		}
		if row[colIndexInQueue] == "-1" {
			f.Executing++
		} else {
			f.Queued++
		}
		if u := row[colUser]; u != "" {
			users[k][u] = true
		}
	}
	out := make([]Flow, 0, len(byKey))
	for k, f := range byKey {
		for u := range users[k] {
			f.Users = append(f.Users, u)
		}
		slices.Sort(f.Users)
		if len(f.Users) > maxUsersPerFlow {
			f.Users = f.Users[:maxUsersPerFlow]
		}
		out = append(out, *f)
	}
	slices.SortFunc(out, func(a, b Flow) int {
		return cmp.Or(cmp.Compare(b.Queued, a.Queued), cmp.Compare(b.Executing, a.Executing),
			cmp.Compare(a.FlowSchema, b.FlowSchema), cmp.Compare(a.Distinguisher, b.Distinguisher))
	})
	return out
}
