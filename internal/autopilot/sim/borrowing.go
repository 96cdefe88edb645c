package sim

import (
	"math"
	"time"

	"github.com/apf-operator/apf-operator/internal/apf/effective"
)

// kube-apiserver's borrowing between priority levels (KEP-1040, its apf_controller's
// updateBorrowing), modelled here: every borrowPeriod it takes each level's seat demand over
// the period (time-weighted mean, standard deviation, high watermark), smooths mean plus
// deviation, and gives every non-exempt level a current concurrency limit between its
// minCL (nominal less lendable) and maxCL (nominal plus its borrowing limit), the limits
// summing to the nominal ones', in proportion to the smoothed demand where the bounds allow.
// Between two adjustments a level runs at most its current limit, whatever is free.
const (
	borrowPeriod = 10 * time.Second
	// smoothing is the weight of the past in the smoothed demand (kube-apiserver's 0.977).
	smoothing = 0.977
	// minTarget stands in for a target of 0 in the fair allocation (no division by zero).
	minTarget = 0.001
)

// seatIntegral integrates one level's seat demand over one adjustment period.
type seatIntegral struct {
	duration, sum, sumSquares float64
	high                      int
}

func (s *seatIntegral) add(d time.Duration, seats int) {
	if d <= 0 {
		return
	}
	x := d.Seconds()
	s.duration += x
	s.sum += x * float64(seats)
	s.sumSquares += x * float64(seats) * float64(seats)
	s.high = max(s.high, seats)
}

// envelope is the period's mean plus its standard deviation.
func (s *seatIntegral) envelope() float64 {
	if s.duration <= 0 {
		return 0
	}
	mean := s.sum / s.duration
	return mean + math.Sqrt(math.Max(0, s.sumSquares/s.duration-mean*mean))
}

// borrowLevel is one non-exempt level's borrowing state.
type borrowLevel struct {
	name                  string
	nominal, minCL, maxCL int
	// smoothed is the smoothed demand, high the last period's high watermark, current the
	// current limit, in seats.
	smoothed      float64
	high, current int
	acc           seatIntegral
	scenarioIndex int // index in the scenario's levels, -1 for a backstop level
	started       bool
}

// borrowing holds every non-exempt level's borrowing state in the engine's configuration.
type borrowing struct {
	scl    int
	levels []*borrowLevel
}

// configure takes the levels and their nominal, min and max limits from the configuration
// (nominal shares as the policy applied them), keeping each known level's smoothed demand
// and current limit, as kube-apiserver does on a configuration change.
func (b *borrowing) configure(cfg *effective.Config, names []string) {
	old := map[string]*borrowLevel{}
	for _, l := range b.levels {
		old[l.name] = l
	}
	b.levels = b.levels[:0]
	for _, p := range cfg.Priorities {
		if p.Exempt() {
			continue
		}
		l := old[p.Name]
		if l == nil {
			l = &borrowLevel{name: p.Name, scenarioIndex: indexOf(names, p.Name)}
		}
		l.nominal = cfg.AssuredConcurrency(p, b.scl)
		lendable := 0 // kube-apiserver defaults an absent lendablePercent to 0
		if !p.LendableAbsent {
			lendable = int(math.Round(float64(l.nominal) * float64(p.LendablePercent) / 100))
		}
		borrowable := b.scl
		if p.BorrowingLimitPercent != nil {
			borrowable = int(math.Round(float64(l.nominal) * float64(*p.BorrowingLimitPercent) / 100))
		}
		l.minCL, l.maxCL = l.nominal-lendable, l.nominal+borrowable
		if !l.started {
			l.current, l.started = l.nominal, true
		}
		b.levels = append(b.levels, l)
	}
}

func indexOf(names []string, name string) int {
	for i, n := range names {
		if n == name {
			return i
		}
	}
	return -1
}

// integrate adds d of the scenario levels' current seat demand.
func (b *borrowing) integrate(d time.Duration, seats []int) {
	for _, l := range b.levels {
		s := 0
		if l.scenarioIndex >= 0 {
			s = seats[l.scenarioIndex]
		}
		l.acc.add(d, s)
	}
}

// adjust ends an adjustment period: updates each level's smoothed demand and high watermark
// from the period and computes the current limits. seats is the demand now: the next
// period's watermark starts there.
func (b *borrowing) adjust(seats []int) {
	for _, l := range b.levels {
		if l.acc.duration > 0 {
			env := l.acc.envelope()
			l.smoothed = math.Max(env, smoothing*l.smoothed+(1-smoothing)*env)
		}
		l.high = l.acc.high
		now := 0
		if l.scenarioIndex >= 0 {
			now = seats[l.scenarioIndex]
		}
		l.acc = seatIntegral{high: now}
	}
	b.allocate()
}

// allocate sets every level's current limit from its bounds, its last period's high
// watermark and its smoothed demand.
func (b *borrowing) allocate() {
	required, minSum, minCurrentSum := 0, 0, 0
	lower := make([]int, len(b.levels))
	for i, l := range b.levels {
		required += l.nominal
		minSum += l.minCL
		// A level is not lowered below what it used in the period, up to its nominal limit.
		lower[i] = max(l.minCL, min(l.nominal, l.high))
		minCurrentSum += lower[i]
	}
	switch {
	case required <= minSum:
		for _, l := range b.levels {
			l.current = l.minCL
		}
	case required <= minCurrentSum:
		frac := float64(required-minSum) / float64(minCurrentSum-minSum)
		for i, l := range b.levels {
			l.current = l.minCL + int(math.Round(float64(lower[i]-l.minCL)*frac))
		}
	default:
		allocs := fairAllocation(float64(required), b.levels, lower)
		for i, l := range b.levels {
			l.current = int(math.Round(allocs[i]))
		}
	}
}

// fairAllocation gives each level p x its target (its smoothed demand, at least its lower
// bound) clamped to [lower, maxCL], with the one p that makes the allocations sum to required
// (found by bisection: the sum grows with p).
func fairAllocation(required float64, levels []*borrowLevel, lower []int) []float64 {
	target := make([]float64, len(levels))
	hi := 0.0
	for i, l := range levels {
		target[i] = math.Max(math.Max(float64(lower[i]), l.smoothed), minTarget)
		hi = math.Max(hi, float64(l.maxCL)/target[i])
	}
	allocs := make([]float64, len(levels))
	at := func(p float64) float64 {
		sum := 0.0
		for i, l := range levels {
			allocs[i] = math.Min(math.Max(p*target[i], float64(lower[i])), float64(l.maxCL))
			sum += allocs[i]
		}
		return sum
	}
	lo := 0.0
	for range 100 {
		mid := (lo + hi) / 2
		if at(mid) < required {
			lo = mid
		} else {
			hi = mid
		}
	}
	at(hi)
	return allocs
}

// limited returns a copy of cfg in which every non-exempt level runs exactly at its current
// limit, for the engine: one share (an ACV of 1 seat, never lent) and a borrowing limit up to
// the current limit, so that the engine's borrowing at dispatch (internal/apf/dispatch) can
// take no more than the limit kube-apiserver would have set. The limits sum to less than the
// engine's server limit, so each level can always reach its own.
func (b *borrowing) limited(cfg *effective.Config) *effective.Config {
	current := map[string]int{}
	for _, l := range b.levels {
		current[l.name] = max(l.current, 1)
	}
	out := *cfg
	out.Priorities = make([]*effective.Priority, len(cfg.Priorities))
	for i, p := range cfg.Priorities {
		cp := *p
		if !p.Exempt() {
			limit := int32(100 * (current[p.Name] - 1))
			cp.Shares, cp.LendablePercent, cp.LendableAbsent, cp.BorrowingLimitPercent = 1, 0, false, &limit
		}
		out.Priorities[i] = &cp
	}
	return &out
}
