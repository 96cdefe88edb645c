package controllers

import (
	"context"
	"fmt"
	"maps"
	"sync/atomic"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/apf-operator/apf-operator/internal/apfmetrics"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/internal/native/budget"
)

// DefaultNativeSeatsPeriod is how often the leader reads kube-apiserver's /metrics for the
// native nominal seats when Options.NativeSeatsPeriod is zero.
const DefaultNativeSeatsPeriod = 30 * time.Second

// nativeSeatsTimeout bounds one read of /metrics.
const nativeSeatsTimeout = 10 * time.Second

// The operator reads kube-apiserver's metrics for the native nominal seats.
// +kubebuilder:rbac:urls=/metrics,verbs=get

// nativeSeats is what kube-apiserver's metrics tell about its priority levels.
type nativeSeats struct {
	// nominal is apiserver_flowcontrol_nominal_limit_seats by priority level.
	nominal map[string]int32
	// scl is the server concurrency limit (apfmetrics.Seats.ServerLimit) of the replica
	// read; 0 when unknown.
	scl int64
	// budgetLimit is the damped minimum over the replicas that the share budget uses
	// (native_limit.go); 0 when unknown.
	budgetLimit int64
}

func (s *nativeSeats) equal(o *nativeSeats) bool {
	if s == nil || o == nil {
		return s == o
	}
	return s.scl == o.scl && s.budgetLimit == o.budgetLimit && maps.Equal(s.nominal, o.nominal)
}

// seatReader reads the native seats from one kube-apiserver's /metrics (behind the Service,
// any replica: they normally share their flags) through the operator's REST client.
type seatReader struct {
	fetch   func(ctx context.Context) ([]byte, error)
	current atomic.Pointer[nativeSeats]
	failed  atomic.Bool // a failure was logged: log the next one only after a success
	// rejections are kube-apiserver's rejection counts, from the same reads (status.observed).
	rejections rejectionWindow
	// limits reads every replica's server limit (nil: only the Service's); damper holds the
	// budget's limit steady (native_limit.go). Only read's caller uses them.
	limits *replicaLimits
	damper limitDamper
}

func newSeatReader(cfg *rest.Config) (*seatReader, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("a client for kube-apiserver's /metrics: %w", err)
	}
	c := dc.RESTClient()
	return &seatReader{fetch: func(ctx context.Context) ([]byte, error) {
		return apfmetrics.Fetch(ctx, c.Get().AbsPath(apfmetrics.MetricsPath).SetHeader("Accept", "text/plain"), apfmetrics.MetricsPath)
	}}, nil
}

// get returns the last seats read; nil before the first success.
func (r *seatReader) get() *nativeSeats {
	if r == nil {
		return nil
	}
	return r.current.Load()
}

// traffic returns the last rejection counts; nil before they are known.
func (r *seatReader) traffic() *observedTraffic {
	if r == nil {
		return nil
	}
	return r.rejections.get()
}

// read reads /metrics once and reports whether the seats or the rejection counts changed. A
// failure (for example forbidden) is logged once and leaves the last seats and counts in place.
// With replicas, the budget's limit also reads every replica (the first read, which the first
// snapshot waits for, does not: an unreachable replica would hold it up).
func (r *seatReader) read(ctx context.Context, replicas bool) bool {
	ctx, cancel := context.WithTimeout(ctx, nativeSeatsTimeout)
	defer cancel()
	raw, err := r.fetch(ctx)
	var families apfmetrics.Families
	if err == nil {
		families, err = apfmetrics.Parse(raw, append(apfmetrics.SeatsMetrics, apfmetrics.RejectedMetric)...)
	}
	var seats *nativeSeats
	if err == nil {
		seats, err = seatsFrom(families)
	}
	if err != nil {
		if !r.failed.Swap(true) {
			logf.FromContext(ctx).Info("Cannot read kube-apiserver's native nominal seats from /metrics; "+
				"status.nativeNominalSeats stays unset", "error", err.Error())
		}
		return false
	}
	r.failed.Store(false)
	reading := seats.scl
	if replicas {
		if lowest, ok := r.limits.minimum(ctx); ok {
			reading = lowest
		}
	}
	seats.budgetLimit = r.damper.observe(reading)
	rejectionsChanged := r.rejections.update(families, time.Now())
	return !seats.equal(r.current.Swap(seats)) || rejectionsChanged
}

// parseSeats reads the nominal seats of every level and the server concurrency limit from
// kube-apiserver's metrics (text format), through apfmetrics.ParseSeats.
func parseSeats(raw []byte) (*nativeSeats, error) {
	seats, err := apfmetrics.ParseSeats(raw)
	if err != nil {
		return nil, err
	}
	return nativeSeatsOf(seats), nil
}

// seatsFrom reads the seats from parsed metric families, through apfmetrics.SeatsOf.
func seatsFrom(families apfmetrics.Families) (*nativeSeats, error) {
	seats, err := apfmetrics.SeatsOf(families)
	if err != nil {
		return nil, err
	}
	return nativeSeatsOf(seats), nil
}

// nativeSeatsOf keeps what the operator's status needs of apfmetrics' seats.
func nativeSeatsOf(s *apfmetrics.Seats) *nativeSeats {
	out := &nativeSeats{nominal: make(map[string]int32, len(s.Nominal)), scl: s.ServerLimit}
	for level, v := range s.Nominal {
		out.nominal[level] = int32(v)
	}
	return out
}

// seatsSettle is how long after a snapshot the seats are read again: the native objects it
// reflects (the projector's writes) take kube-apiserver's configuration controller a moment.
const seatsSettle = time.Second

// startSeats reads the native seats once, so that the first snapshot has them, then every
// seatsPeriod and seatsSettle after each snapshot (seatsDue) in the background, signalling a
// new snapshot when they change. A snapshot computed because the seats changed asks for one
// more read, which finds them unchanged: the loop ends there.
func (h *snapshotHolder) startSeats(ctx context.Context) {
	if h.seats == nil {
		return
	}
	h.seats.read(ctx, false)
	go func() {
		tick := time.NewTicker(h.seatsPeriod)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			case <-h.seatsDue:
				select {
				case <-ctx.Done():
					return
				case <-time.After(seatsSettle):
				}
			}
			if h.seats.read(ctx, true) {
				h.signal()
			}
		}
	}()
}

// readSeatsSoon asks startSeats' loop for a read seatsSettle from now.
func (h *snapshotHolder) readSeatsSoon() {
	if h.seats == nil {
		return
	}
	select {
	case h.seatsDue <- struct{}{}:
	default:
	}
}

// applySeats sets the native seats of every RequestPriority's view that the plan projects; s is not
// published yet. With the server's concurrency limit known, the seats are kube-apiserver's own
// arithmetic (ceil(limit × shares / sum of every level's shares)) over the levels the plan
// leaves in place, so that the status written with the projection already holds them and the
// next read of /metrics confirms them instead of causing a second status write; otherwise they
// are the metric's value.
func (s *snapshot) applySeats(seats *nativeSeats) {
	if seats == nil || s.plan == nil {
		return
	}
	planned := plannedShares(s.natives.PriorityLevels, s.plan.PriorityLevels)
	var sum int64
	for _, shares := range planned {
		sum += int64(shares)
	}
	for name, v := range s.rps {
		// The plan's result, not the view's: a view waiting for its native object to be seen
		// (Pending) is confirmed from the cache later, and then writes its seats at once.
		res := s.plan.RequestPriorities[name]
		if !res.Projected {
			continue
		}
		level := res.NativeName
		n, ok := seats.nominal[level]
		if shares, planned := planned[level]; planned && seats.scl > 0 {
			n, ok = int32(budget.Seats(seats.scl, int64(shares), sum)), true
		}
		if ok {
			v.nativeSeats = &n
			s.rps[name] = v
		}
	}
}

// plannedShares is the shares by level of the native levels once the plan is applied: the
// levels the operator does not own, and the plan's own.
func plannedShares(existing, plan []flowcontrolv1.PriorityLevelConfiguration) map[string]int32 {
	out := make(map[string]int32, len(existing)+len(plan))
	for i := range existing {
		if !native.Owned(&existing[i]) {
			out[existing[i].Name] = budget.Shares(&existing[i])
		}
	}
	for i := range plan {
		out[plan[i].Name] = budget.Shares(&plan[i])
	}
	return out
}

// levelsChanged reports whether the native levels' shares differ between two snapshots (prev
// may be nil), which changes kube-apiserver's seats.
func levelsChanged(prev, cur *snapshot) bool {
	if prev == nil {
		return true
	}
	return !maps.Equal(levelShares(prev.natives.PriorityLevels), levelShares(cur.natives.PriorityLevels))
}

func levelShares(plcs []flowcontrolv1.PriorityLevelConfiguration) map[string]int32 {
	out := make(map[string]int32, len(plcs))
	for i := range plcs {
		out[plcs[i].Name] = budget.Shares(&plcs[i])
	}
	return out
}
