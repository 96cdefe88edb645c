// Package sim is a reproducible simulator of the autopilot: it drives the project's own
// flow-control engine (internal/apf) on a fake clock, as a model of kube-apiserver's flow
// control, with synthetic demand (Poisson arrivals at a rate that changes over virtual time,
// lognormal service times, from fixed seeds), measures every level's seat demand per window as
// kube-apiserver's apiserver_flowcontrol_demand_seats does, re-computes every level's current
// limit every 10 s as kube-apiserver's borrowing does (borrowing.go), and compares four
// policies: the configured (static) shares, the same with the pool lending and borrowing
// (kube-apiserver's own borrowing), one recommendation applied once, and the closed loop
// (autopilot.Loop) with borrowing on. docs/autopilot-simulation.md describes the model, its
// limits and the table it produces.
//
// Each request runs Engine.HandleInto in its own goroutine (it blocks while queued and while
// executing); the simulator processes one event at a time (an arrival, a finish, a wait-limit
// deadline, a window's end) and after each waits until the engine accounts for every request
// as executing, queued or ended, so the outcome never depends on goroutine scheduling: the
// same seed gives the same table, bit for bit.
package sim
