package autopilot_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// The workload. Every request holds one seat for serviceTime (the slow webhook), so a tenant
// sending r requests a second demands r x serviceTime seats: heavyRate 18 seats against the 14
// nominal seats a tenant has with the configured shares, lightRate 2 seats, batchRate 1.
const (
	serviceTime = time.Second
	heavyRate   = 18.0
	lightRate   = 2.0
	batchRate   = 1.0
	// shiftEvery is how long one tenant stays heavy before the demand shifts to the other.
	shiftEvery = 75 * time.Second
)

// segment is a stretch of the schedule: requests per second by tenant.
type segment struct {
	name   string
	length time.Duration
	rates  map[string]float64
}

// schedule is the same in both runs: tenant-a heavy, then tenant-b heavy; batch steady.
var schedule = []segment{
	{name: "tenant-a heavy", length: shiftEvery, rates: map[string]float64{"tenant-a": heavyRate, "tenant-b": lightRate, "batch": batchRate}},
	{name: "tenant-b heavy", length: shiftEvery, rates: map[string]float64{"tenant-a": lightRate, "tenant-b": heavyRate, "batch": batchRate}},
}

// sent is what one tenant's client saw in one run.
type sent struct {
	Sent, Created, Rejected, Other int
	// OtherStatus is the last status (or error) counted in Other.
	OtherStatus string
	// LevelUIDs are the distinct X-Kubernetes-PF-PriorityLevel-UID headers seen.
	LevelUIDs map[string]bool
}

// loader sends each tenant's dry-run ConfigMap creations, authenticated as its user.
type loader struct {
	clients map[string]*http.Client
	urls    map[string]string
}

// newLoader authenticates one envtest user per tenant (client certificates).
func newLoader(t *testing.T) *loader {
	t.Helper()
	l := &loader{clients: map[string]*http.Client{}, urls: map[string]string{}}
	for _, tn := range tenants {
		u, err := suite.Cluster.Env.AddUser(envtest.User{Name: tn.user}, nil)
		if err != nil {
			t.Fatal(err)
		}
		cfg := u.Config()
		cfg.Timeout = time.Minute
		c, err := rest.HTTPClientFor(cfg)
		if err != nil {
			t.Fatal(err)
		}
		l.clients[tn.name] = c
		l.urls[tn.name] = strings.TrimSuffix(cfg.Host, "/") + "/api/v1/namespaces/" + tn.name + "/configmaps?dryRun=All"
	}
	return l
}

// run plays the schedule once, open-loop (a tenant starts its requests at its rate whatever
// happened to the earlier ones), and returns what each tenant saw once every request ended.
func (l *loader) run(ctx context.Context, segs []segment) map[string]*sent {
	out := map[string]*sent{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for name := range l.clients {
		s := &sent{LevelUIDs: map[string]bool{}}
		out[name] = s
		wg.Go(func() { l.tenant(ctx, name, segs, s, &mu) })
	}
	wg.Wait()
	return out
}

// tenant plays the schedule for one tenant.
func (l *loader) tenant(ctx context.Context, name string, segs []segment, s *sent, mu *sync.Mutex) {
	var inflight sync.WaitGroup
	defer inflight.Wait()
	for _, seg := range segs {
		end := time.After(seg.length)
		tick := time.NewTicker(time.Duration(float64(time.Second) / seg.rates[name]))
		for done := false; !done; {
			select {
			case <-ctx.Done():
				tick.Stop()
				return
			case <-end:
				done = true
			case <-tick.C:
				inflight.Go(func() { l.send(ctx, name, s, mu) })
			}
		}
		tick.Stop()
	}
}

const configMap = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"load"},"data":{"k":"v"}}`

// send issues one request and counts its outcome.
func (l *loader) send(ctx context.Context, name string, s *sent, mu *sync.Mutex) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.urls[name], strings.NewReader(configMap))
	if err != nil {
		return
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := l.clients[name].Do(req)
	mu.Lock()
	defer mu.Unlock()
	s.Sent++
	if err != nil {
		s.Other++
		s.OtherStatus = err.Error()
		return
	}
	_ = resp.Body.Close()
	if uid := resp.Header.Get("X-Kubernetes-PF-PriorityLevel-UID"); uid != "" {
		s.LevelUIDs[uid] = true
	}
	switch resp.StatusCode {
	case http.StatusCreated, http.StatusOK:
		s.Created++
	case http.StatusTooManyRequests:
		s.Rejected++
	default:
		s.Other++
		s.OtherStatus = resp.Status
	}
}
