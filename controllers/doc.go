// Package controllers holds the operator's reconcilers:
//
//   - the defaults reconciler (defaults_controller.go) keeps the default RequestPriority and
//     FlowSchema objects of its enforcement mode (internal/defaults.For) present and repaired,
//     and retires (deletes, Event Retired) those of the other mode that it created, as
//     internal/defaults.Set.Plan decides (defaults_retire.go). It is
//     level-triggered: every change of either kind, and a periodic resync, enqueue one fixed
//     request, so a burst of changes costs one pass over the cache. It waits for the cache to
//     show its own writes before deciding again (defaults_expectations.go), and repairs with a
//     JSON patch that applies only if the object is unchanged since the decision
//     (defaults_patch.go), so it never overwrites a concurrent edit by the user.
//   - the status reconcilers (requestpriority_controller.go, flowschema_controller.go) report
//     on every object whether it is in effect (Ready), computed by effective.Compute over the
//     cached objects: the same function the classifier and the projection use, so status and
//     behaviour agree; and, with enforcement native, whether kube-apiserver enforces it
//     (Projected, status.nativeName), True only once the native object holds the projection.
//   - the projector (projection_controller.go), with enforcement native, keeps kube-apiserver's
//     native flowcontrol.apiserver.k8s.io/v1 objects equal to internal/native.Project of the
//     effective configuration: server-side apply of what differs (field manager apf-operator),
//     deletion of owned objects whose source is gone, never a write to an object it does not
//     own. Like the defaults reconciler it handles one fixed request and waits for the cache to
//     show its writes. Options.NativeUnmatched (--native-unmatched) says whether the backstop
//     FlowSchema is projected.
//   - the native pruner (projection_prune.go), with enforcement none, deletes the native
//     objects the operator owns, left by a run with enforcement native.
//
// The three share one snapshot (snapshot.go, snapshot_holder.go): the effective configuration,
// its projection and every object's view (what its status is computed from) are computed once
// per burst of changes (when it pauses for 2 s, or every 30 s while it lasts) and published
// atomically; no reconcile lists the cache. The status reconcilers are enqueued only for the
// objects whose view changed. So a bulk apply writes each object's status and native object
// about once.
//
// Status is written only when it changes and events are emitted only on transitions, so an
// idle cluster sees no writes from the operator.
//
// Metrics, registered into the prometheus.Registerer given in Options:
//
//   - apf_operator_defaults_created_total{kind}: default objects created.
//   - apf_operator_defaults_repaired_total{kind}: default objects whose drifted spec was
//     restored.
//   - apf_operator_defaults_conflicts_total{kind}: creations, repairs or retirements that lost a
//     race with another writer: a creation refused with AlreadyExists, or a repair or deletion
//     refused because the object changed after the decision; the change triggers a new decision.
//   - apf_operator_defaults_taken_over_total{kind}: default objects handed over to the user
//     because an applied manifest set their spec (annotation autoupdate-spec set to "false").
//   - apf_operator_projection_objects{kind,state}: objects by projection state.
//   - apf_operator_projection_writes_total{kind,operation,result}: writes of native objects.
//   - apf_operator_snapshot_duration_seconds: computations of the shared snapshot (histogram;
//     its count is how many were made).
package controllers
