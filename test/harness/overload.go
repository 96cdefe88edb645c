package harness

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"sync"
	"time"
)

// Client is one identity sending GET pods requests to the filter.
type Client struct {
	// Name labels the client in results.
	Name string
	// User and Namespace identify the requests: GET pods in Namespace as User (front-proxy
	// headers, group system:authenticated; or impersonation headers, see Target).
	User, Namespace string
	// Groups are the user's groups besides system:authenticated.
	Groups []string
	// Rate, when positive, makes the client open-loop: it starts Rate requests per second
	// whatever happens to earlier ones, so what it is served measures the filter, not its own
	// waiting. Otherwise the client is closed-loop with Concurrency requests in flight,
	// retrying 50 ms after a 429.
	Rate        float64
	Concurrency int
}

// ClientResult is what one client saw.
type ClientResult struct {
	Client
	// Sent counts requests started; Served, Rejected and Other count 200s, 429s and anything
	// else that completed before the run ended.
	Sent, Served, Rejected, Other int
	// OtherStatus is the status code of the last response counted in Other.
	OtherStatus int
	// RetryAfterMissing counts 429 responses without a Retry-After header.
	RetryAfterMissing int
	// FlowSchema is the X-APF-Flow-Schema header of the last flow-controlled response, or
	// kube-apiserver's X-Kubernetes-PF-FlowSchema-UID.
	FlowSchema string
	// Latencies are the round-trip times of the served requests, ascending.
	Latencies []time.Duration
}

// Percentile returns the p-th percentile (0 < p <= 1) of the served latencies.
func (r *ClientResult) Percentile(p float64) time.Duration {
	if len(r.Latencies) == 0 {
		return 0
	}
	i := int(p*float64(len(r.Latencies))+0.5) - 1
	return r.Latencies[min(max(i, 0), len(r.Latencies)-1)]
}

// Target is where an overload sends its requests and how they carry the client's identity.
type Target struct {
	// BaseURL is the server's URL.
	BaseURL string
	// Transport, when set, carries the requests (for example an admin transport of
	// kube-apiserver, with Impersonate set); nil: plain HTTP with front-proxy headers.
	Transport http.RoundTripper
	// Impersonate sends the identity as impersonation headers (Impersonate-User,
	// Impersonate-Group), which kube-apiserver authorises for its admin and classifies as the
	// impersonated user; false: X-Remote-User / X-Remote-Group, which only a server that opts in
	// to trusting them believes (FilterServer does; the filter's default does not).
	Impersonate bool
}

// RunOverload runs the clients against baseURL for the given duration, waits for the requests
// still in flight, and returns the results in the clients' order.
func RunOverload(ctx context.Context, baseURL string, clients []Client, d time.Duration) []ClientResult {
	return RunOverloadOn(ctx, Target{BaseURL: baseURL}, clients, d)
}

// RunOverloadOn is RunOverload against a Target.
func RunOverloadOn(ctx context.Context, target Target, clients []Client, d time.Duration) []ClientResult {
	runCtx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	transport := target.Transport
	if transport == nil {
		plain := &http.Transport{MaxIdleConnsPerHost: 1024}
		defer plain.CloseIdleConnections()
		transport = plain
	}
	httpClient := &http.Client{Transport: transport}
	baseURL := target.BaseURL
	results := make([]ClientResult, len(clients))
	var wg sync.WaitGroup
	for i := range clients {
		rec := &recorder{result: &results[i], impersonate: target.Impersonate}
		results[i].Client = clients[i]
		wg.Add(1)
		go func() {
			defer wg.Done()
			if clients[i].Rate > 0 {
				openLoop(runCtx, ctx, httpClient, baseURL, rec)
			} else {
				closedLoop(runCtx, httpClient, baseURL, rec)
			}
		}()
	}
	wg.Wait()
	for i := range results {
		sort.Slice(results[i].Latencies, func(a, b int) bool { return results[i].Latencies[a] < results[i].Latencies[b] })
	}
	return results
}

// recorder serialises one client's updates.
type recorder struct {
	mu          sync.Mutex
	result      *ClientResult
	impersonate bool
}

func (r *recorder) sent() {
	r.mu.Lock()
	r.result.Sent++
	r.mu.Unlock()
}

func (r *recorder) record(resp *http.Response, latency time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, h := range []string{"X-APF-Flow-Schema", "X-Kubernetes-PF-FlowSchema-UID"} {
		if s := resp.Header.Get(h); s != "" {
			r.result.FlowSchema = s
		}
	}
	switch resp.StatusCode {
	case http.StatusOK:
		r.result.Served++
		r.result.Latencies = append(r.result.Latencies, latency)
	case http.StatusTooManyRequests:
		r.result.Rejected++
		if resp.Header.Get("Retry-After") == "" {
			r.result.RetryAfterMissing++
		}
	default:
		r.result.Other++
		r.result.OtherStatus = resp.StatusCode
	}
}

// openLoop starts requests at the client's rate until runCtx ends; the requests themselves run
// under ctx, so those in flight at the end still complete.
func openLoop(runCtx, ctx context.Context, c *http.Client, baseURL string, rec *recorder) {
	interval := time.Duration(float64(time.Second) / rec.result.Rate)
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	var inflight sync.WaitGroup
	defer inflight.Wait()
	for {
		select {
		case <-runCtx.Done():
			return
		case <-ticker.C:
			rec.sent()
			inflight.Add(1)
			go func() {
				defer inflight.Done()
				_, _ = send(ctx, c, baseURL, rec)
			}()
		}
	}
}

// closedLoop keeps Concurrency requests in flight until runCtx ends; after a 429 a worker
// pauses 50 ms, as a client honouring Retry-After at a shorter scale would.
func closedLoop(runCtx context.Context, c *http.Client, baseURL string, rec *recorder) {
	var wg sync.WaitGroup
	for g := 0; g < rec.result.Concurrency; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for runCtx.Err() == nil {
				rec.sent()
				if status, err := send(runCtx, c, baseURL, rec); err == nil && status == http.StatusTooManyRequests {
					time.Sleep(50 * time.Millisecond)
				}
			}
		}()
	}
	wg.Wait()
}

// send issues one request and records its outcome; a request cut off by ctx is not recorded.
func send(ctx context.Context, c *http.Client, baseURL string, rec *recorder) (int, error) {
	url := fmt.Sprintf("%s/api/v1/namespaces/%s/pods", baseURL, rec.result.Namespace)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	identify(req, &rec.result.Client, rec.impersonate)
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	// Drain the body so the connection is reused.
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	rec.record(resp, time.Since(start))
	return resp.StatusCode, nil
}

// identify sets the identity headers of one request.
func identify(req *http.Request, c *Client, impersonate bool) {
	if impersonate {
		req.Header.Set("Impersonate-User", c.User)
		for _, g := range c.Groups {
			req.Header.Add("Impersonate-Group", g)
		}
		return
	}
	req.Header.Set("X-Remote-User", c.User)
	req.Header.Add("X-Remote-Group", "system:authenticated")
	for _, g := range c.Groups {
		req.Header.Add("X-Remote-Group", g)
	}
}
