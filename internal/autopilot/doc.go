// Package autopilot sizes the nominal shares of priority levels from the demand kube-apiserver
// measured, and keeps a closed loop that applies such sizes safely. It is pure: it reads
// windows of measurements and times given to it (no clock, no client), so the operator's
// leader, `apf-operator recommend` and the simulator share one algorithm, and tests run it
// with a fake clock.
//
// The algorithm, its arithmetic and its references are in docs/autopilot.md. In short: the
// levels with autopilot form a pool whose total shares never change, so every other level
// (kube-apiserver's, the control plane's) keeps exactly its nominal seats; inside the pool,
// shares move from levels whose measured demand leaves them slack to levels under pressure
// (and back to a level under pressure below its configured shares from one above its own),
// each bounded, stepped, confirmed over several windows, and held inside a dead band
// (hysteresis) so the loop settles.
package autopilot
