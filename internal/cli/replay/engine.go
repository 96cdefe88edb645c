package replay

import (
	"time"

	"github.com/apf-operator/apf-operator/internal/apf/request"
	"github.com/apf-operator/apf-operator/internal/audit"
)

// Engine classifies requests under the current and (optionally) the proposed configuration
// and tallies the results. Classification is cached by the attributes it depends on, so a log
// of a million requests from a few thousand distinct (user, groups, verb, resource, namespace)
// tuples classifies each tuple once per configuration. Not safe for concurrent use.
type Engine struct {
	current, proposed Classifier
	bucket            time.Duration
	// Observe, when set, is called with every request and its classification under the
	// current and proposed configurations (equal without a proposed one); it must not keep r.
	Observe func(r *audit.Request, current, proposed Class)

	classes  []Class
	classIdx map[Class]int
	cache    map[attrKey]*tally
	tallies  []*tally
	// seats[c][bucket] holds per class index: requests arriving and seat-seconds (c: 0
	// current, 1 proposed).
	seats [2]map[int64]*bucketTally
	// first and last span the requests; lastArrival is the latest arrival.
	first, last, lastArrival time.Time
	total                    int64
}

// tally counts the requests of one (user, namespace, verb) with one classification under
// each configuration.
type tally struct {
	user, namespace, verb string
	current, proposed     int // class indexes
	count                 int64
}

// bucketTally holds one time bucket's figures, indexed by class.
type bucketTally struct {
	arrivals    []int64
	seatSeconds []float64 // from the requests that start or end in the bucket
	fullDelta   []int64   // change in the number of requests that fill whole buckets from here
}

// attrKey is what native classification depends on (not the object name). Groups are keyed by
// their interned slice: equal lists from different raw arrays are a cache miss, never a wrong
// answer.
type attrKey struct {
	user, verb, apiGroup, resource, subresource, namespace, path string
	groups                                                       *string
	nGroups                                                      int
	resourceRequest                                              bool
}

// maxCache bounds the classification cache; past it, requests are classified uncached.
const maxCache = 1 << 20

// NewEngine returns an Engine; proposed may be nil (only the current configuration is
// classified). bucket is the seat demand's time resolution.
func NewEngine(current, proposed Classifier, bucket time.Duration) *Engine {
	e := &Engine{current: current, proposed: proposed, bucket: bucket, classIdx: map[Class]int{},
		cache: map[attrKey]*tally{}}
	for i := range e.seats {
		e.seats[i] = map[int64]*bucketTally{}
	}
	return e
}

// Add classifies and tallies one request. It keeps nothing of r beyond its interned strings.
func (e *Engine) Add(r *audit.Request) {
	a := &r.Attributes
	key := attrKey{user: a.User, verb: a.Verb, apiGroup: a.APIGroup, resource: a.Resource,
		subresource: a.Subresource, namespace: a.Namespace, path: a.Path, nGroups: len(a.Groups),
		resourceRequest: a.ResourceRequest}
	if len(a.Groups) > 0 {
		key.groups = &a.Groups[0]
	}
	t, ok := e.cache[key]
	if !ok {
		t = e.classify(a)
		if len(e.cache) < maxCache {
			e.cache[key] = t
		}
	}
	t.count++
	e.total++
	e.times(r, a, t)
	if e.Observe != nil {
		e.Observe(r, e.classes[t.current], e.classes[t.proposed])
	}
}

// classify returns the tally of a's (user, namespace, verb) and classification.
func (e *Engine) classify(a *request.Attributes) *tally {
	cur := e.class(e.current.Classify(a))
	prop := cur
	if e.proposed != nil {
		prop = e.class(e.proposed.Classify(a))
	}
	// Tallies sharing (user, namespace, verb, classes) are merged in the report.
	t := &tally{user: a.User, namespace: a.Namespace, verb: a.Verb, current: cur, proposed: prop}
	e.tallies = append(e.tallies, t)
	return t
}

func (e *Engine) class(c Class) int {
	i, ok := e.classIdx[c]
	if !ok {
		i = len(e.classes)
		e.classes = append(e.classes, c)
		e.classIdx[c] = i
	}
	return i
}

// times records the request's arrival and seat occupancy in the time buckets.
func (e *Engine) times(r *audit.Request, a *request.Attributes, t *tally) {
	if e.first.IsZero() || r.Received.Before(e.first) {
		e.first = r.Received
	}
	end := r.Completed
	if a.Verb == request.VerbWatch || end.Before(r.Received) {
		// A watch holds seats only while it starts, not for its whole life (see docs).
		end = r.Received
	}

	if end.After(e.last) {
		e.last = end
	}
	if r.Received.After(e.last) {
		e.last = r.Received
	}
	if r.Received.After(e.lastArrival) {
		e.lastArrival = r.Received
	}
	e.occupy(0, t.current, r.Received, end)
	if e.proposed != nil {
		e.occupy(1, t.proposed, r.Received, end)
	}
}

// occupy adds one arrival at start and one seat from start to end to class c's buckets: the
// partial first and last buckets directly, the full ones between as a difference (+1 where
// they start, -1 where they stop) that the report sums up, so that a request costs the same
// whatever its length.
func (e *Engine) occupy(config, c int, start, end time.Time) {
	if e.classes[c].PriorityLevel == "" {
		return // unclassified: holds no seat
	}
	width := int64(e.bucket)
	s, f := start.UnixNano(), end.UnixNano()
	first := floorDiv(s, width)
	e.bucketAt(config, first, c).arrivals[c]++
	if f <= s {
		return
	}
	last := floorDiv(f, width) // the bucket holding the end instant (exclusive)
	if first == last {
		e.bucketAt(config, first, c).seatSeconds[c] += seconds(f - s)
		return
	}
	e.bucketAt(config, first, c).seatSeconds[c] += seconds((first+1)*width - s)
	if rest := f - last*width; rest > 0 {
		e.bucketAt(config, last, c).seatSeconds[c] += seconds(rest)
	}
	if last > first+1 {
		e.bucketAt(config, first+1, c).fullDelta[c]++
		e.bucketAt(config, last, c).fullDelta[c]--
	}
}

func seconds(ns int64) float64 { return float64(ns) / float64(time.Second) }

func (e *Engine) bucketAt(config int, b int64, c int) *bucketTally {
	bt := e.seats[config][b]
	if bt == nil {
		bt = &bucketTally{}
		e.seats[config][b] = bt
	}
	if len(bt.arrivals) <= c {
		n := len(e.classes)
		bt.arrivals = append(bt.arrivals, make([]int64, n-len(bt.arrivals))...)
		bt.seatSeconds = append(bt.seatSeconds, make([]float64, n-len(bt.seatSeconds))...)
		bt.fullDelta = append(bt.fullDelta, make([]int64, n-len(bt.fullDelta))...)
	}
	return bt
}

func floorDiv(x, y int64) int64 {
	q := x / y
	if x%y != 0 && (x < 0) != (y < 0) {
		q--
	}
	return q
}
