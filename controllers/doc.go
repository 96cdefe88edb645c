// Package controllers holds the operator's reconcilers:
//
//   - the defaults reconciler (defaults_controller.go) keeps the default RequestPriority and
//     FlowSchema objects present and repaired, as internal/defaults.Plan decides. It is
//     level-triggered: every change of either kind, and a periodic resync, enqueue one fixed
//     request, so a burst of changes costs one pass over the cache. It waits for the cache to
//     show its own writes before deciding again (defaults_expectations.go), and repairs with a
//     JSON patch that applies only if the object is unchanged since the decision
//     (defaults_patch.go), so it never overwrites a concurrent edit by the user.
//   - the status reconcilers (requestpriority_controller.go, flowschema_controller.go) report
//     on every object whether the filter uses it, computed by effective.Compute over the cached
//     objects: the same function the filter engine uses, so status and behaviour agree.
//
// Status is written only when it changes and events are emitted only on transitions, so an
// idle cluster sees no writes from the operator.
//
// Metrics, registered into the prometheus.Registerer given in Options:
//
//   - apf_operator_defaults_created_total{kind}: default objects created.
//   - apf_operator_defaults_repaired_total{kind}: default objects whose drifted spec was
//     restored.
//   - apf_operator_defaults_conflicts_total{kind}: creations or repairs that lost a race with
//     another writer: a creation refused with AlreadyExists, or a repair refused because the
//     object changed after the decision; the change triggers a new decision.
package controllers
