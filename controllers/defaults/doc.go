// Package defaults holds the defaults reconciler. It keeps the default RequestPriority and
// FlowSchema objects (internal/defaults.Default, the same in every enforcement mode) present
// and repaired, replaces owned defaults created before they were bound (upgrade.go: delete and
// create, Event Created) unless FlowSchemas of the user refer to them (then it keeps them,
// Event ReplaceBlocked naming those FlowSchemas, until none does; a FlowSchema change triggers
// the next pass), and creates the missing defaults once on the upgrade from a system-top-only
// install (Event Upgraded on system-top), as internal/defaults.Set.Plan decides. It reads the
// cache only, never the effective configuration's snapshot of package controllers, whose
// SetupWithManager calls this package's when defaults management is on.
//
// It is level-triggered: every change of either kind, and a periodic resync, enqueue one fixed
// request, so a burst of changes costs one pass over the cache (controller.go). It waits for the
// cache to show its own writes before deciding again (reconcileutil.Expectations), and repairs
// with a JSON patch that applies only if the object is unchanged since the decision (patch.go),
// so it never overwrites a concurrent edit by the user. A default whose spec a user applied is
// handed over to them (apply.go: annotation autoupdate-spec "false", Event TakenOver).
//
// Metrics, registered into Options.Registerer (NewMetrics):
//
//   - apf_operator_defaults_created_total{kind}: default objects created.
//   - apf_operator_defaults_repaired_total{kind}: default objects whose drifted spec was
//     restored.
//   - apf_operator_defaults_conflicts_total{kind}: creations, repairs or replacements that lost a
//     race with another writer: a creation refused with AlreadyExists, or a repair or deletion
//     refused because the object changed after the decision; the change triggers a new decision.
//   - apf_operator_defaults_taken_over_total{kind}: default objects handed over to the user
//     because an applied manifest set their spec (annotation autoupdate-spec set to "false").
//
// This package is named after what it reconciles; it imports internal/defaults (the defaults as
// data, and the pure plan) under the same name.
package defaults
