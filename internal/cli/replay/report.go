package replay

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/apf-operator/apf-operator/internal/audit"
)

// Report is the result of a replay, for people (WriteText), tools (JSON; the field names are
// stable) and pull requests (WriteGitHub).
type Report struct {
	Input audit.Stats `json:"input"`
	// Requests is the number of requests classified; From and To span their times.
	Requests int64     `json:"requests"`
	From     time.Time `json:"from"`
	To       time.Time `json:"to"`
	// Proposed tells whether a proposed configuration was given; without one, the proposed
	// columns repeat the current ones and there are no moves.
	Proposed bool `json:"proposed"`
	// Levels are the requests per priority level (and FlowSchema) under each configuration.
	Levels []LevelCount `json:"levels"`
	// Moves are the requests whose level differs between the configurations, largest first.
	Moves []Move `json:"moves"`
	// ByUser, ByNamespace and ByVerb break the classification down; a cluster-scoped or
	// non-resource request has namespace "".
	ByUser      []Breakdown `json:"byUser"`
	ByNamespace []Breakdown `json:"byNamespace"`
	ByVerb      []Breakdown `json:"byVerb"`
	SeatDemand  SeatDemand  `json:"seatDemand"`
	// NotProjected are the objects of the manifests (-f, --current-dir) that the operator would
	// not project: the replay classified without them, as kube-apiserver would. Not empty: the
	// command exits 1.
	NotProjected []NotProjected `json:"notProjected"`
}

// LevelCount is one priority level's requests.
type LevelCount struct {
	Level       string        `json:"level"`
	Current     int64         `json:"current"`
	Proposed    int64         `json:"proposed"`
	FlowSchemas []SchemaCount `json:"flowSchemas"`
}

// SchemaCount is one FlowSchema's requests (within a level).
type SchemaCount struct {
	FlowSchema string `json:"flowSchema"`
	Current    int64  `json:"current"`
	Proposed   int64  `json:"proposed"`
}

// Move is the requests that go from one level to another.
type Move struct {
	From     string  `json:"from"`
	To       string  `json:"to"`
	Requests int64   `json:"requests"`
	Percent  float64 `json:"percentOfFrom"` // of the From level's current requests
	// TopUsers are the users with the most moved requests.
	TopUsers []UserMove `json:"topUsers"`
}

// UserMove is one user's part of a Move.
type UserMove struct {
	User     string  `json:"user"`
	Requests int64   `json:"requests"`
	Percent  float64 `json:"percentOfUser"` // of all the user's requests
}

// Breakdown is the classification of the requests of one user, namespace or verb.
type Breakdown struct {
	Key      string   `json:"key"`
	Requests int64    `json:"requests"`
	Current  []Landed `json:"current"`
	Proposed []Landed `json:"proposed"`
}

// Landed is how many requests land in a FlowSchema and level.
type Landed struct {
	Class
	Requests int64 `json:"requests"`
}

// SeatDemand is the seats the requests hold per level over time: Buckets[i] starts at
// Start + i × BucketSeconds.
type SeatDemand struct {
	Start         time.Time     `json:"start"`
	BucketSeconds float64       `json:"bucketSeconds"`
	Buckets       int           `json:"buckets"`
	Current       []LevelSeries `json:"current"`
	Proposed      []LevelSeries `json:"proposed,omitempty"`
}

// LevelSeries is one level's demand per bucket: requests arriving and mean seats occupied
// (seat-seconds / bucket length).
type LevelSeries struct {
	Level     string    `json:"level"`
	Arrivals  []int64   `json:"arrivals"`
	MeanSeats []float64 `json:"meanSeats"`
	// PeakMeanSeats is the largest MeanSeats, in the bucket starting at PeakAt.
	PeakMeanSeats float64   `json:"peakMeanSeats"`
	PeakAt        time.Time `json:"peakAt"`
}

// maxBuckets bounds the seat demand series.
const maxBuckets = 100000

// topUsers is how many users a Move lists.
const topUsers = 5

// Report builds the report. stats are the reader's counts.
func (e *Engine) Report(stats audit.Stats) (*Report, error) {
	r := &Report{Input: stats, Requests: e.total, Proposed: e.proposed != nil}
	if e.total > 0 {
		r.From, r.To = e.first.UTC(), e.last.UTC()
	}
	merged := e.merge()
	r.Levels = e.levels(merged)
	r.Moves = e.moves(merged)
	r.ByUser = e.breakdown(merged, func(t *tally) string { return t.user })
	r.ByNamespace = e.breakdown(merged, func(t *tally) string { return t.namespace })
	r.ByVerb = e.breakdown(merged, func(t *tally) string { return t.verb })
	var err error
	r.SeatDemand, err = e.seatDemand()
	return r, err
}

// merge adds up the tallies with equal (user, namespace, verb, classes).
func (e *Engine) merge() []tally {
	type key struct {
		user, namespace, verb string
		current, proposed     int
	}
	idx := map[key]int{}
	var out []tally
	for _, t := range e.tallies {
		k := key{t.user, t.namespace, t.verb, t.current, t.proposed}
		if i, ok := idx[k]; ok {
			out[i].count += t.count
			continue
		}
		idx[k] = len(out)
		out = append(out, *t)
	}
	return out
}

func (e *Engine) levels(ts []tally) []LevelCount {
	byLevel := map[string]*LevelCount{}
	bySchema := map[[2]string]*SchemaCount{}
	add := func(c Class, cur, prop int64) {
		l := byLevel[c.LevelName()]
		if l == nil {
			l = &LevelCount{Level: c.LevelName()}
			byLevel[c.LevelName()] = l
		}
		s := bySchema[[2]string{c.LevelName(), c.SchemaName()}]
		if s == nil {
			s = &SchemaCount{FlowSchema: c.SchemaName()}
			bySchema[[2]string{c.LevelName(), c.SchemaName()}] = s
		}
		l.Current, l.Proposed, s.Current, s.Proposed = l.Current+cur, l.Proposed+prop, s.Current+cur, s.Proposed+prop
	}
	for _, t := range ts {
		add(e.classes[t.current], t.count, 0)
		add(e.classes[t.proposed], 0, t.count)
	}
	out := make([]LevelCount, 0, len(byLevel))
	for _, l := range byLevel {
		for k, s := range bySchema {
			if k[0] == l.Level {
				l.FlowSchemas = append(l.FlowSchemas, *s)
			}
		}
		slices.SortFunc(l.FlowSchemas, func(x, y SchemaCount) int {
			return cmp.Or(cmp.Compare(y.Current+y.Proposed, x.Current+x.Proposed), cmp.Compare(x.FlowSchema, y.FlowSchema))
		})
		out = append(out, *l)
	}
	slices.SortFunc(out, func(x, y LevelCount) int {
		return cmp.Or(cmp.Compare(y.Current+y.Proposed, x.Current+x.Proposed), cmp.Compare(x.Level, y.Level))
	})
	return out
}

func (e *Engine) moves(ts []tally) []Move {
	perUser := map[string]int64{}
	fromLevel := map[string]int64{}
	type mk struct{ from, to string }
	moved := map[mk]*Move{}
	users := map[mk]map[string]int64{}
	for _, t := range ts {
		perUser[t.user] += t.count
		from, to := e.classes[t.current].LevelName(), e.classes[t.proposed].LevelName()
		fromLevel[from] += t.count
		if from == to {
			continue
		}
		k := mk{from, to}
		if moved[k] == nil {
			moved[k] = &Move{From: from, To: to}
			users[k] = map[string]int64{}
		}
		moved[k].Requests += t.count
		users[k][t.user] += t.count
	}
	out := make([]Move, 0, len(moved))
	for k, m := range moved {
		m.Percent = percent(m.Requests, fromLevel[k.from])
		for u, n := range users[k] {
			m.TopUsers = append(m.TopUsers, UserMove{User: u, Requests: n, Percent: percent(n, perUser[u])})
		}
		slices.SortFunc(m.TopUsers, func(x, y UserMove) int {
			return cmp.Or(cmp.Compare(y.Requests, x.Requests), cmp.Compare(x.User, y.User))
		})
		m.TopUsers = m.TopUsers[:min(len(m.TopUsers), topUsers)]
		out = append(out, *m)
	}
	slices.SortFunc(out, func(x, y Move) int {
		return cmp.Or(cmp.Compare(y.Requests, x.Requests), cmp.Compare(x.From, y.From), cmp.Compare(x.To, y.To))
	})
	return out
}

func percent(n, of int64) float64 {
	if of == 0 {
		return 0
	}
	return float64(n) * 100 / float64(of)
}

func (e *Engine) breakdown(ts []tally, keyOf func(*tally) string) []Breakdown {
	type landing struct {
		key   string
		class int
	}
	byKey := map[string]*Breakdown{}
	cur, prop := map[landing]int64{}, map[landing]int64{}
	for i := range ts {
		t := &ts[i]
		k := keyOf(t)
		if byKey[k] == nil {
			byKey[k] = &Breakdown{Key: k}
		}
		byKey[k].Requests += t.count
		cur[landing{k, t.current}] += t.count
		prop[landing{k, t.proposed}] += t.count
	}
	for l, n := range cur {
		byKey[l.key].Current = append(byKey[l.key].Current, Landed{Class: e.named(l.class), Requests: n})
	}
	for l, n := range prop {
		byKey[l.key].Proposed = append(byKey[l.key].Proposed, Landed{Class: e.named(l.class), Requests: n})
	}
	out := make([]Breakdown, 0, len(byKey))
	for _, b := range byKey {
		sortLanded(b.Current)
		sortLanded(b.Proposed)
		out = append(out, *b)
	}
	slices.SortFunc(out, func(x, y Breakdown) int {
		return cmp.Or(cmp.Compare(y.Requests, x.Requests), cmp.Compare(x.Key, y.Key))
	})
	return out
}

// named is class c with "(unclassified)" for the empty names, as the other report fields have.
func (e *Engine) named(c int) Class {
	return Class{FlowSchema: e.classes[c].SchemaName(), PriorityLevel: e.classes[c].LevelName()}
}

func sortLanded(ls []Landed) {
	slices.SortFunc(ls, func(x, y Landed) int {
		return cmp.Or(cmp.Compare(y.Requests, x.Requests), cmp.Compare(x.FlowSchema, y.FlowSchema))
	})
}

func (e *Engine) seatDemand() (SeatDemand, error) {
	d := SeatDemand{BucketSeconds: e.bucket.Seconds()}
	if e.total == 0 {
		return d, nil
	}
	width := int64(e.bucket)
	// The last bucket holds the last arrival, or the last occupied instant (an end on a bucket's
	// boundary occupies nothing of the next bucket).
	firstB := floorDiv(e.first.UnixNano(), width)
	lastB := max(floorDiv(e.lastArrival.UnixNano(), width), floorDiv(e.last.UnixNano()-1, width))
	if n := lastB - firstB + 1; n > maxBuckets {
		return d, fmt.Errorf("--bucket %s makes %d time buckets for the requests from %s to %s (at most %d): "+
			"give a larger --bucket", e.bucket, n, e.first.UTC().Format(time.RFC3339), e.last.UTC().Format(time.RFC3339), maxBuckets)
	}
	d.Start, d.Buckets = time.Unix(0, firstB*width).UTC(), int(lastB-firstB+1)
	d.Current = e.series(0, firstB, d)
	if e.proposed != nil {
		d.Proposed = e.series(1, firstB, d)
	}
	return d, nil
}

func (e *Engine) series(config int, firstB int64, d SeatDemand) []LevelSeries {
	byLevel := map[string]*LevelSeries{}
	full := make([]int64, len(e.classes)) // requests filling the whole bucket, per class
	for i := range d.Buckets {
		bt := e.seats[config][firstB+int64(i)]
		for c := range e.classes {
			var arrivals int64
			var seatSeconds float64
			if bt != nil && c < len(bt.arrivals) {
				full[c] += bt.fullDelta[c]
				arrivals, seatSeconds = bt.arrivals[c], bt.seatSeconds[c]
			}
			seatSeconds += float64(full[c]) * d.BucketSeconds
			level := e.classes[c].PriorityLevel
			if level == "" || (arrivals == 0 && seatSeconds == 0) {
				continue
			}
			s := byLevel[level]
			if s == nil {
				s = &LevelSeries{Level: level, Arrivals: make([]int64, d.Buckets), MeanSeats: make([]float64, d.Buckets)}
				byLevel[level] = s
			}
			s.Arrivals[i] += arrivals
			s.MeanSeats[i] += seatSeconds / d.BucketSeconds
		}
	}
	out := make([]LevelSeries, 0, len(byLevel))
	for _, s := range byLevel {
		for i, m := range s.MeanSeats {
			if m > s.PeakMeanSeats {
				s.PeakMeanSeats, s.PeakAt = m, d.Start.Add(time.Duration(i)*e.bucket)
			}
		}
		out = append(out, *s)
	}
	slices.SortFunc(out, func(x, y LevelSeries) int { return cmp.Compare(x.Level, y.Level) })
	return out
}
