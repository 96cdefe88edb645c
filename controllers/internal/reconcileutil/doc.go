// Package reconcileutil holds what the operator's reconcilers share across their packages
// (controllers, controllers/defaults, controllers/eventratelimit):
//
//   - the conditions every status carries (conditions.go): Ready from an effective status
//     (SetReady), kstatus's Stalled and Reconciling derived from Ready and Projected
//     (SetStalledReconciling), and the events of Ready's transitions (AnnounceReady);
//   - the write-then-wait bookkeeping (expectations.go) of the reconcilers that decide over the
//     whole cluster (the defaults reconciler, the projector): they wait until the cache shows
//     their own writes before deciding again;
//   - what a failed status write means for the next reconcile (StatusWriteResult);
//   - the registration of a reconciler's metrics (RegisterAll).
package reconcileutil
