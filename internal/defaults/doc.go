// Package defaults holds the default RequestPriority and FlowSchema objects as data
// (defaults.go) and the pure decision of which of them to create, repair or retire (Set.Plan),
// following the proposal's "Default Behavior" section and DESIGN.md "Semantics".
//
// There are two sets (Set): the proposal's five RequestPriority and five FlowSchema objects,
// for enforcement none and the in-process filter (Proposal), and system-top alone for
// enforcement native (Native), so that projecting the defaults changes no traffic class's
// level or seats in kube-apiserver. For picks the set of an enforcement mode.
//
//   - Whenever no actual RequestPriority has priority level 0, the default RequestPriority
//     objects whose names are not in use are created.
//   - Whenever no actual FlowSchema refers to a RequestPriority of level 0, the default
//     FlowSchema objects whose names are not in use are created.
//   - Objects the operator creates carry the managed-by label and the autoupdate annotation
//     "true"; while both are present, a spec that drifts from the default is restored. An
//     object without the label, or with the annotation "false" or absent, belongs to the user
//     and is never changed.
//   - Owned objects named as defaults of the other set only (left by an operator that ran
//     with the other enforcement mode) are retired: deleted, FlowSchemas first, a
//     RequestPriority only while no kept FlowSchema refers to it. Nothing else is ever deleted.
//   - A drifted spec that a user declared by applying a manifest (server-side apply by any
//     field manager, or kubectl's client-side apply; see Declared) is not drift but a
//     take-over: the object is handed over (annotation set to "false") rather than restored,
//     so that the operator never fights a GitOps tool. If the manifest itself pins the
//     annotation to "true", the operator changes nothing and reports the contradiction.
//   - Creations come in an order that survives an operator stopped part-way: the objects that
//     end the need to create (the level-0 RequestPriority, the FlowSchema naming it) last.
//
// The package has no Kubernetes client: the reconciler in controllers/ feeds Plan the objects
// in its cache and carries out the Actions.
package defaults
