package controllers

import (
	"context"
	"fmt"
	"sync"

	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/apf-operator/apf-operator/internal/apfmetrics"
)

// The server concurrency limit the share budget uses (native.Existing.ServerConcurrencyLimit)
// is held steady, so that the budget's decisions do not follow every reading:
//
//   - A reading is the minimum over the kube-apiserver replicas (each has its own limit and
//     shares it out on its own, so the smallest is the one whose kept levels a projected level
//     squeezes most). When the replicas cannot be read one by one, it is the limit of the
//     replica the kubernetes Service reached.
//   - The first reading is taken as it is. After that, a decrease applies only after
//     limitDecreaseReadings consecutive readings below the limit held, and then to the highest
//     of them; an increase only after limitIncreaseReadings consecutive readings above it, and
//     then to the lowest of them. A reading equal to the limit held, or on the other side of
//     it, starts the count again.
//
// So replicas with different limits read through the Service (600, 300, 600, ...) never move the
// limit held: no level flips between projected and OverBudget, and no native level is deleted
// and re-created by readings alone. A level the held limit puts over the budget stays
// projected until the held limit changes; then the budget's order (internal/native,
// budget_order.go) refuses the newest projected levels first, and the projector deletes their
// native levels once.
const (
	limitDecreaseReadings = 3  // 90 s at the default 30 s period
	limitIncreaseReadings = 10 // 5 minutes at the default 30 s period
)

// limitDamper holds the damped server limit. Not safe for concurrent use (the seat reader's
// loop is its only user).
type limitDamper struct {
	held int64 // 0 before the first reading
	// pending is the limit a run of readings on one side of held would apply: the highest of a
	// run of decreases, the lowest of a run of increases; run counts its readings (negative for
	// decreases).
	pending int64
	run     int
}

// observe takes a reading (0, unknown, is ignored) and returns the limit held.
func (d *limitDamper) observe(reading int64) int64 {
	switch {
	case reading <= 0:
	case d.held == 0:
		d.held = reading
	case reading < d.held:
		if d.run >= 0 {
			d.run, d.pending = 0, reading
		}
		d.run--
		d.pending = max(d.pending, reading)
		if -d.run >= limitDecreaseReadings {
			d.held, d.run = d.pending, 0
		}
	case reading > d.held:
		if d.run <= 0 {
			d.run, d.pending = 0, reading
		}
		d.run++
		d.pending = min(d.pending, reading)
		if d.run >= limitIncreaseReadings {
			d.held, d.run = d.pending, 0
		}
	default:
		d.run = 0
	}
	return d.held
}

// replicaLimitBackoff is how many reads skip the replicas one by one after they could not be
// read (an address the operator cannot reach costs a timeout on each read): the Service's
// replica stands in meanwhile.
const replicaLimitBackoff = 10

// replicaLimits reads the server limit of every kube-apiserver replica.
type replicaLimits struct {
	source *replicaSource

	mu     sync.Mutex
	skip   int  // reads left to skip
	failed bool // a failure was logged: log the next one only after a success
}

// minimum returns the smallest server limit over the replicas; ok is false when they could not
// all be read (or are skipped after a failure).
func (r *replicaLimits) minimum(ctx context.Context) (limit int64, ok bool) {
	if r == nil || r.source == nil {
		return 0, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.skip > 0 {
		r.skip--
		return 0, false
	}
	limit, err := r.read(ctx)
	if err != nil {
		if !r.failed {
			logf.FromContext(ctx).Info("Cannot read every kube-apiserver replica's concurrency limit; the share budget "+
				"uses the limit of the replica the kubernetes Service reaches", "error", err.Error())
		}
		r.failed, r.skip = true, replicaLimitBackoff
		return 0, false
	}
	r.failed = false
	return limit, true
}

func (r *replicaLimits) read(ctx context.Context) (int64, error) {
	getters, err := r.source.replicaGetters(ctx)
	if err != nil {
		return 0, err
	}
	return r.readFrom(ctx, getters)
}

// readFrom reads the server limit of every replica in getters and returns the smallest.
func (r *replicaLimits) readFrom(ctx context.Context, getters map[string]apfmetrics.Getter) (int64, error) {
	if len(getters) == 0 {
		return 0, fmt.Errorf("the kubernetes Service has no ready endpoint")
	}
	ctx, cancel := context.WithTimeout(ctx, nativeSeatsTimeout/2)
	defer cancel()
	var lowest int64
	for addr, get := range getters {
		raw, err := get(ctx, "/metrics")
		if err != nil {
			return 0, fmt.Errorf("replica %s: %w", addr, err)
		}
		seats, err := apfmetrics.ParseSeats(raw)
		if err != nil {
			return 0, fmt.Errorf("replica %s: %w", addr, err)
		}
		if lowest == 0 || seats.ServerLimit < lowest {
			lowest = seats.ServerLimit
		}
	}
	return lowest, nil
}
