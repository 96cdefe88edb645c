package scale

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// latencyRecorder keeps every webhook request's handling time.
type latencyRecorder struct {
	mu    sync.Mutex
	times []time.Duration
}

func (l *latencyRecorder) add(d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.times = append(l.times, d)
}

// quantile returns the q-quantile (nearest rank) and the number of requests.
func (l *latencyRecorder) quantile(q float64) (time.Duration, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.times) == 0 {
		return 0, 0
	}
	sorted := slices.Clone(l.times)
	slices.Sort(sorted)
	rank := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[max(0, min(rank, len(sorted)-1))], len(sorted)
}

// figures are the recorded times' p50, p99 and share within 5 ms.
func (l *latencyRecorder) figures() latencyFigures {
	p50, _ := l.quantile(0.5)
	p99, n := l.quantile(0.99)
	l.mu.Lock()
	defer l.mu.Unlock()
	fast := 0
	for _, d := range l.times {
		if d <= 5*time.Millisecond {
			fast++
		}
	}
	res := latencyFigures{p50: p50, p99: p99, requests: n, resolution: "every request timed in process"}
	if n > 0 {
		res.within5ms = float64(fast) / float64(n)
	}
	return res
}

// timedServer is the manager's webhook server with every handler timed, from the request's
// arrival to the end of its response (decoding, validation against the cache, encoding).
type timedServer struct {
	webhook.Server
	latency *latencyRecorder
}

// Register implements webhook.Server.
func (s *timedServer) Register(path string, hook http.Handler) {
	s.Server.Register(path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		hook.ServeHTTP(w, r)
		s.latency.add(time.Since(start))
	}))
}

// memorySampler records the process's peak live heap while it runs.
type memorySampler struct {
	stop     chan struct{}
	done     chan struct{}
	peakHeap uint64
}

func startMemorySampler(every time.Duration) *memorySampler {
	m := &memorySampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(m.done)
		var ms runtime.MemStats
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&ms)
			m.peakHeap = max(m.peakHeap, ms.HeapAlloc)
			select {
			case <-m.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return m
}

// finish stops sampling and returns the peak heap.
func (m *memorySampler) finish() uint64 {
	close(m.stop)
	<-m.done
	return m.peakHeap
}

// peakRSS is a process's peak resident set (VmHWM), in bytes, from its /proc/<pid>/status.
func peakRSS(statusFile string) (uint64, error) {
	data, err := os.ReadFile(statusFile)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, fmt.Errorf("no VmHWM in %s", statusFile)
}

// loadAverage is the machine's 1-minute load average, which the figures depend on.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Fields(string(data))[0]
}

// auditEvent is the part of an audit.k8s.io/v1 Event the count needs.
type auditEvent struct {
	Verb      string `json:"verb"`
	UserAgent string `json:"userAgent"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		APIGroup    string `json:"apiGroup"`
		Name        string `json:"name"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
}

// writeCounts are the operator's writes, from the audit log, by the object they are about.
type writeCounts struct {
	// status counts status writes by "resource/name" (ours), native by "resource/name" (the
	// native objects); events counts event creations and patches.
	status, native map[string]int
	events         int
	// failed counts the writes the API server refused (conflicts).
	failed int
	// other lists writes of any other kind, which the operator should not make here.
	other []string
	// last is when the last successful status or native write completed (kube-apiserver's
	// clock, the test's host): the moment the load converged, once the poll has confirmed it.
	last time.Time
}

// countWrites reads the audit log and counts the successful writes of the user agents that
// operator reports its own.
func countWrites(path string, operator func(userAgent string) bool) (*writeCounts, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	c := &writeCounts{status: map[string]int{}, native: map[string]int{}}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev timedAuditEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return nil, fmt.Errorf("audit log %s: %w", path, err)
		}
		if !operator(ev.UserAgent) || ev.ObjectRef == nil || ev.ResponseStatus == nil {
			continue
		}
		c.add(&ev)
	}
	return c, sc.Err()
}

func (c *writeCounts) add(ev *timedAuditEvent) {
	ref := ev.ObjectRef
	if ev.ResponseStatus.Code >= 300 {
		c.failed++
		return
	}
	switch {
	case ref.APIGroup == "flowcontrol.apf-operator.io" && ref.Subresource == "status":
		c.status[ref.Resource+"/"+ref.Name]++
		if ref.Name != barrierName { // the barrier's write comes after convergence by design
			c.last = latest(c.last, ev.StageTimestamp)
		}
	case ref.APIGroup == "flowcontrol.apiserver.k8s.io":
		c.native[ref.Resource+"/"+ref.Name]++
		c.last = latest(c.last, ev.StageTimestamp)
	case ref.Resource == "events":
		c.events++
	case ref.Resource == "selfsubjectreviews":
		// The webhooks learn the operator's own user once at start.
	case ref.Resource == "tokenreviews" || ref.Resource == "subjectaccessreviews":
		// The metrics endpoint authenticates and authorizes the test's scrape.
	default:
		c.other = append(c.other, fmt.Sprintf("%s %s/%s %s/%s", ev.Verb, ref.APIGroup, ref.Resource, ref.Name, ref.Subresource))
	}
}

// latest returns the later of a and b.
func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
