// Package eventratelimit holds the reconcilers of EventRateLimit objects, which configure the
// events webhook's engine (internal/eventratelimit, imported under the same name). They never
// read the effective configuration's snapshot of package controllers, whose SetupWithManager
// calls this package's.
//
//   - The configuration reconciler (config.go) hands every valid object to the engine. It runs
//     in every replica, because every replica serves the events webhook.
//   - The replica divider (replicas.go), when the operator knows its Deployment, keeps the
//     engine's divisor at the Deployment's ready replicas, so that the cluster-wide rate is the
//     configured one. It also runs in every replica.
//   - The status reconciler (status.go, leader only) reports Ready and the leader replica's
//     counts, written at most every Options.StatusPeriod, never per event.
package eventratelimit
