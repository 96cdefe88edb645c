package controllers

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// demandBuckets are kube-apiserver's apiserver_flowcontrol_demand_seats bucket bounds.
var demandBuckets = []float64{0.2, 0.4, 0.6, 0.8, 1, 1.2, 1.4, 1.7, 2, 2.8, 4, 6}

// fakeAPIServer stands for kube-apiserver's /metrics: per native level, a seat demand held
// for the whole of each interval, counted in the cumulative demand histogram (nanoseconds at
// demand / nominal seats, as kube-apiserver's timing-ratio histogram), and dispatched and
// rejected counters. The nominal seats are what the test says the native levels hold.
type fakeAPIServer struct {
	// demand and rejections are the seats each level asks for and the requests it has
	// rejected per interval, by native level name (set by the test between ticks).
	demand, rejections map[string]float64
	// nominal returns the nominal seats of each level now (the shares in force).
	nominal func() map[string]float64

	buckets              map[string][]float64 // cumulative nanoseconds at most each bound; +Inf last
	dispatched, rejected map[string]float64
	fail                 error
}

func newFakeAPIServer(nominal func() map[string]float64) *fakeAPIServer {
	return &fakeAPIServer{demand: map[string]float64{}, rejections: map[string]float64{}, nominal: nominal,
		buckets: map[string][]float64{}, dispatched: map[string]float64{}, rejected: map[string]float64{}}
}

// advance records one interval of the current demand at the current nominal seats.
func (f *fakeAPIServer) advance(interval time.Duration) {
	nominal := f.nominal()
	for level, seats := range f.demand {
		ratio := seats / nominal[level]
		b := f.buckets[level]
		if b == nil {
			b = make([]float64, len(demandBuckets)+1)
			f.buckets[level] = b
		}
		for i := range b {
			if i == len(demandBuckets) || ratio <= demandBuckets[i] {
				b[i] += float64(interval.Nanoseconds())
			}
		}
		f.dispatched[level] += 1000
		f.rejected[level] += f.rejections[level]
	}
}

// fetch is the seatReader-style read of /metrics.
func (f *fakeAPIServer) fetch(context.Context) ([]byte, error) {
	if f.fail != nil {
		return nil, f.fail
	}
	nominal := f.nominal()
	levels := make([]string, 0, len(f.demand))
	for level := range f.demand {
		levels = append(levels, level)
	}
	sort.Strings(levels)
	var b strings.Builder
	for _, family := range []string{"nominal_limit_seats", "current_limit_seats"} {
		fmt.Fprintf(&b, "# TYPE apiserver_flowcontrol_%s gauge\n", family)
		for _, level := range levels {
			fmt.Fprintf(&b, "apiserver_flowcontrol_%s{priority_level=%q} %g\n", family, level, nominal[level])
		}
	}
	b.WriteString("# TYPE apiserver_flowcontrol_demand_seats histogram\n")
	for _, level := range levels {
		cum := f.buckets[level]
		if cum == nil {
			cum = make([]float64, len(demandBuckets)+1)
		}
		for i, bound := range append(append([]float64(nil), demandBuckets...), math.Inf(1)) {
			le := fmt.Sprintf("%g", bound)
			if math.IsInf(bound, 1) {
				le = "+Inf"
			}
			fmt.Fprintf(&b, "apiserver_flowcontrol_demand_seats_bucket{priority_level=%q,le=%q} %g\n", level, le, cum[i])
		}
		fmt.Fprintf(&b, "apiserver_flowcontrol_demand_seats_sum{priority_level=%q} 0\n", level)
		fmt.Fprintf(&b, "apiserver_flowcontrol_demand_seats_count{priority_level=%q} %g\n", level, cum[len(cum)-1])
	}
	b.WriteString("# TYPE apiserver_flowcontrol_dispatched_requests_total counter\n")
	for _, level := range levels {
		fmt.Fprintf(&b, "apiserver_flowcontrol_dispatched_requests_total{flow_schema=\"f\",priority_level=%q} %g\n", level, f.dispatched[level])
	}
	b.WriteString("# TYPE apiserver_flowcontrol_rejected_requests_total counter\n")
	for _, level := range levels {
		fmt.Fprintf(&b, "apiserver_flowcontrol_rejected_requests_total{flow_schema=\"f\",priority_level=%q,reason=\"queue-full\"} %g\n",
			level, f.rejected[level])
	}
	return []byte(b.String()), nil
}
