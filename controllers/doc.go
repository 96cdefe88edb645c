// Package controllers holds the reconcilers that share the effective configuration's snapshot,
// and SetupWithManager, which registers them and those of the other families:
//
//   - the status reconciler (status_controller.go), one per kind over a small per-kind adapter
//     (requestpriority_status.go, flowschema_status.go), reports on every object whether it is
//     in effect (Ready), computed by effective.Compute over the cached objects: the same
//     function the classifier and the projection use, so status and behaviour agree; and, with
//     enforcement native, whether kube-apiserver enforces it (Projected, status.nativeName),
//     True only once the native object holds the projection.
//   - the projector (projection_controller.go), with enforcement native, keeps kube-apiserver's
//     native flowcontrol.apiserver.k8s.io/v1 objects equal to internal/native.Project of the
//     effective configuration: server-side apply of what differs (field manager apf-operator),
//     deletion of owned objects whose source is gone, never a write to an object it does not
//     own. Like the defaults reconciler it handles one fixed request and waits for the cache to
//     show its writes (reconcileutil.Expectations). Options.NativeUnmatched
//     (--native-unmatched) says whether the backstop FlowSchema is projected.
//   - the native pruner (projection_prune.go), with enforcement none, deletes the native
//     objects the operator owns, left by a run with enforcement native.
//
// The other families read the cache only and live in their own packages: the defaults
// reconciler (controllers/defaults, with Options.ManageDefaults) and the EventRateLimit
// reconcilers (controllers/eventratelimit). What the families share (conditions, the
// write-then-wait expectations, status-write results) is in controllers/internal/reconcileutil.
//
// The reconcilers of this package share one snapshot (snapshot.go, snapshot_holder.go): the
// effective configuration, its projection and every object's view (what its status is
// computed from) are computed once per burst of changes (when it pauses for 2 s, or every 30 s while it lasts) and published
// atomically; no reconcile lists the cache. The status reconcilers are enqueued only for the
// objects whose view changed. So a bulk apply writes each object's status and native object
// about once.
//
// Status is written only when it changes and events are emitted only on transitions, so an
// idle cluster sees no writes from the operator.
//
// Metrics, registered into the prometheus.Registerer given in Options (the defaults metrics,
// apf_operator_defaults_*, are listed in controllers/defaults):
//
//   - apf_operator_projection_objects{kind,state}: objects by projection state.
//   - apf_operator_projection_writes_total{kind,operation,result}: writes of native objects.
//   - apf_operator_snapshot_duration_seconds: computations of the shared snapshot (histogram;
//     its count is how many were made).
//   - apf_operator_rejection_summaries_total: recomputations of status.observed's rejection
//     summary (leader, enforcement native).
package controllers
