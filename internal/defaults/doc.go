// Package defaults holds the default RequestPriority and FlowSchema objects as data
// (defaults.go) and the pure decision of which of them to create, repair or replace
// (Set.Plan), following the proposal's "Default Behavior" section and DESIGN.md "Defaults".
//
// There is one set (Default) for every enforcement mode: the proposal's five RequestPriority
// and five FlowSchema objects. The non-top RequestPriorities are bound (spec.nativeLevel) to
// the kube-apiserver levels that already serve their classes, so native enforcement adds no
// level and no shares; the FlowSchemas whose projection would move requests away from the
// kube-apiserver FlowSchema that classifies them are withheld (Withheld: Projected=False,
// reason ShadowedByNative, naming that FlowSchema). The in-process filter uses the proposal's
// queuing fields, which the bound RequestPriorities keep.
//
//   - Whenever no actual RequestPriority has priority level 0, the default RequestPriority
//     objects whose names are not in use are created.
//   - Whenever no actual FlowSchema refers to a RequestPriority of level 0, the default
//     FlowSchema objects whose names are not in use are created.
//   - Once, on the upgrade from an operator that shipped system-top alone in native mode (its
//     own system-top without AnnotationDefaultSet), the defaults whose names are not in use are
//     created although system-top is level 0; then system-top is marked and the two rules above
//     hold again.
//   - Objects the operator creates carry the managed-by label and the autoupdate annotation
//     "true"; while both are present, a spec that drifts from the default is restored. An
//     object without the label, or with the annotation "false" or absent, belongs to the user
//     and is never changed.
//   - An owned default RequestPriority whose immutable nativeLevel differs from the default's
//     (created before the defaults were bound) is replaced: deleted and created at once. Not
//     while a FlowSchema other than the operator's own defaults refers to it: binding it would
//     move that FlowSchema's requests to kube-apiserver's level without the user choosing it,
//     so it is kept as it is and reported (Blocked, reason ReasonReplaceBlocked) until no such
//     FlowSchema remains (replace.go).
//   - A drifted spec that a user declared by applying a manifest (server-side apply by any
//     field manager, or kubectl's client-side apply; see Declared) is not drift but a
//     take-over: the object is handed over (annotation set to "false") rather than restored,
//     so that the operator never fights a GitOps tool. If the manifest itself pins the
//     annotation to "true", the operator changes nothing and reports the contradiction.
//   - Creations come in an order that survives an operator stopped part-way: the objects that
//     end the need to create (the level-0 RequestPriority, the FlowSchema naming it, the
//     upgrade marker) last.
//
// The package has no Kubernetes client: the reconciler in controllers/ feeds Plan the objects
// in its cache and carries out the Actions.
package defaults
