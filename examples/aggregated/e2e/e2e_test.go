package e2e

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	demov1alpha1 "example.com/aggregated/apis/demo/v1alpha1"
	"example.com/aggregated/server"
)

// The two tenants, each with its own FlowSchema and RequestPriority of its name.
const (
	noisy = "tenant-noisy"
	quiet = "tenant-quiet"
)

// Sizes of the test. The sample server has 6 seats; tenant-noisy and tenant-quiet have 10
// shares each, so each is assured ceil(6 × 10 / (100 + 20)) = 1 seat, and a free seat goes to a
// waiting request of a level below its assurance first, then to any waiting request. So
// tenant-noisy can hold at most 6 seats and its single queue 2 more requests: floodWorkers
// requests in a loop keep that queue overflowing, and tenant-quiet waits at most one list.
const (
	concurrencyLimit = 6
	listDelay        = 300 * time.Millisecond
	floodWorkers     = 10
	quietRequests    = 5
	maxFloodRequests = 3000
)

// The classification of a request no FlowSchema matches: the backstop FlowSchema at the
// logically lowest level (tenant-noisy's 5000), or the exempt backstop for system:masters.
const (
	catchAllSchema   = "non-top-backstop"
	catchAllPriority = noisy
	exemptName       = "system-top"
)

// widgetsPath is the collection the tenants list.
var widgetsPath = "/apis/" + demov1alpha1.GroupName + "/" + demov1alpha1.SchemeGroupVersion.Version +
	"/namespaces/default/widgets"

// spoofedMaster are front-proxy headers claiming a cluster administrator.
var spoofedMaster = http.Header{"X-Remote-User": {"admin"}, "X-Remote-Group": {"system:masters"}}

// TestAggregatedServerEnforcesFlowControl drives the sample server through kube-apiserver's
// aggregator: client → kube-apiserver → aggregator → sample server → apf-operator's filter.
func TestAggregatedServerEnforcesFlowControl(t *testing.T) {
	ctx := t.Context()
	certs := newPKI(t)
	env := startControlPlane(t, certs)
	admin := newClient(t, env.Config)
	create(ctx, t, admin, tenantLevel(noisy, 5000, 10, 2), tenantLevel(quiet, 4000, 10, 50),
		userSchema(noisy, 1000), userSchema(quiet, 1000))
	create(ctx, t, admin, widgetReaders(noisy, quiet)...)
	port := startSampleServer(t, env.Config, certs)
	registerAPIService(ctx, t, admin, port, certs.servingCA.pem())
	waitAvailable(ctx, t, admin, 45*time.Second)
	waitProxied(t, env.Config, 30*time.Second)
	createWidget(t, env.Config)
	waitClassified(t, apiURL(env.Config, widgetsPath), impersonating(t, env.Config, quiet), quiet)

	t.Run("flood", func(t *testing.T) { testFlood(t, env.Config, certs, port) })
	t.Run("spoofed headers", func(t *testing.T) { testSpoofedHeaders(t, env, certs, port) })
	t.Run("debug endpoints", func(t *testing.T) { testDebugEndpoints(t, env, certs, port) })
}

// startSampleServer runs the sample server on a free port of 127.0.0.1 until the test ends.
func startSampleServer(t *testing.T, admin *rest.Config, certs *pki) int {
	t.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s, err := server.New(&server.Options{Kubeconfig: writeKubeconfig(t, admin, certs.dir), Listener: listener,
		ServingCertFile: certs.serving.certFile, ServingKeyFile: certs.serving.keyFile,
		ConcurrencyLimit: concurrencyLimit, ListDelay: listDelay})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the sample server failed: %v", err)
		}
	})
	return portOf(t, listener)
}

// waitProxied waits until kube-apiserver proxies the demo group's discovery to the sample
// server: the aggregator adds the proxy route shortly after it marks the APIService Available.
func waitProxied(t *testing.T, admin *rest.Config, timeout time.Duration) {
	t.Helper()
	c := httpClientFor(t, admin)
	url := apiURL(admin, "/apis/"+demov1alpha1.SchemeGroupVersion.String())
	var last reply
	if !poll(t.Context(), timeout, func() bool {
		last, _ = get(c, url, nil)
		return last.status == http.StatusOK
	}) {
		t.Fatalf("GET %s through kube-apiserver: not 200 within %s; last: %d: %s", url, timeout, last.status, last.body)
	}
}

// createWidget creates the widget "first" as the admin, through the aggregator.
func createWidget(t *testing.T, admin *rest.Config) {
	t.Helper()
	body, _ := json.Marshal(&demov1alpha1.Widget{TypeMeta: metav1.TypeMeta{
		APIVersion: demov1alpha1.SchemeGroupVersion.String(), Kind: "Widget"},
		ObjectMeta: metav1.ObjectMeta{Name: "first"}, Spec: demov1alpha1.WidgetSpec{Description: "made by the test"}})
	r, err := post(httpClientFor(t, admin), apiURL(admin, widgetsPath), body)
	if err != nil || r.status != http.StatusCreated {
		t.Fatalf("creating a widget: %v, status %d: %s", err, r.status, r.body)
	}
}

// waitClassified waits until user's lists are classified to user's FlowSchema: the sample
// server's informers have delivered the configuration.
func waitClassified(t *testing.T, url string, c *http.Client, user string) {
	t.Helper()
	var last reply
	if !poll(t.Context(), 30*time.Second, func() bool {
		last, _ = get(c, url, nil)
		return last.flowSchema == user
	}) {
		t.Fatalf("%s's lists not classified to FlowSchema %s within 30s; last: %d, schema %q: %s",
			user, user, last.status, last.flowSchema, last.body)
	}
}

// testFlood floods the sample server as tenant-noisy and lists as tenant-quiet meanwhile:
// noisy gets 429s naming its schema and level, quiet is always served.
func testFlood(t *testing.T, admin *rest.Config, certs *pki, port int) {
	url := apiURL(admin, widgetsPath)
	f := startFlood(t, impersonating(t, admin, noisy), url)
	if !poll(t.Context(), 20*time.Second, func() bool { return f.rejections() > 0 }) {
		_, _ = f.stop()
		t.Fatalf("no 429 for %s within 20s of flooding (%d replies)", noisy, f.count())
	}
	quietReplies := listRepeatedly(t, impersonating(t, admin, quiet), url, quietRequests)
	noisyReplies, err := f.stop()
	if err != nil {
		t.Fatal(err)
	}

	checkNoisy(t, noisyReplies)
	for i, r := range quietReplies {
		if r.status != http.StatusOK || r.flowSchema != quiet || r.priority != quiet ||
			!strings.Contains(string(r.body), `"name":"first"`) {
			t.Errorf("quiet request %d during the flood: %d, schema %q, priority %q: %s",
				i, r.status, r.flowSchema, r.priority, r.body)
		}
	}
	rejected := rejectedMetric(t, certs, admin, port, noisy)
	if seen := countStatus(noisyReplies, http.StatusTooManyRequests); rejected < float64(seen) {
		t.Errorf("the sample server counted %v rejections of %s, the client saw %d", rejected, noisy, seen)
	}
}

// listRepeatedly lists url n times in a row, failing the test on a transport error.
func listRepeatedly(t *testing.T, c *http.Client, url string, n int) []reply {
	t.Helper()
	out := make([]reply, 0, n)
	for range n {
		r, err := get(c, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// checkNoisy checks that the flood had 429s with Retry-After and that every reply (served or
// rejected) names tenant-noisy's schema and level.
func checkNoisy(t *testing.T, replies []reply) {
	t.Helper()
	t.Logf("%s: %d requests, %d served, %d rejected", noisy, len(replies),
		countStatus(replies, http.StatusOK), countStatus(replies, http.StatusTooManyRequests))
	for _, r := range replies {
		if r.status != http.StatusOK && r.status != http.StatusTooManyRequests {
			t.Fatalf("%s got %d: %s", noisy, r.status, r.body)
		}
		if r.flowSchema != noisy || r.priority != noisy {
			t.Fatalf("%s's %d names schema %q, priority %q", noisy, r.status, r.flowSchema, r.priority)
		}
		if r.status == http.StatusTooManyRequests {
			checkRejection(t, r)
		}
	}
}

// statusMessage is the message of a metav1.Status body, or the whole body when it is none.
func statusMessage(body []byte) string {
	var status metav1.Status
	if json.Unmarshal(body, &status) == nil && status.Kind == "Status" {
		return status.Message
	}
	return string(body)
}

// checkRejection checks a 429: Retry-After of at least a second and a TooManyRequests Status.
func checkRejection(t *testing.T, r reply) {
	t.Helper()
	if seconds, err := strconv.Atoi(r.retryAfter); err != nil || seconds < 1 {
		t.Fatalf("429 with Retry-After %q, want whole seconds >= 1", r.retryAfter)
	}
	var status metav1.Status
	if err := json.Unmarshal(r.body, &status); err != nil || status.Reason != metav1.StatusReasonTooManyRequests {
		t.Fatalf("429 body is not a TooManyRequests Status (%v): %s", err, r.body)
	}
}

// countStatus counts the replies with status code.
func countStatus(replies []reply, code int) int {
	n := 0
	for _, r := range replies {
		if r.status == code {
			n++
		}
	}
	return n
}

// flood lists a URL from floodWorkers goroutines in a loop.
type flood struct {
	mu      sync.Mutex
	replies []reply
	err     error
	done    chan struct{}
	wg      sync.WaitGroup
}

// startFlood starts flooding url with c.
func startFlood(t *testing.T, c *http.Client, url string) *flood {
	t.Helper()
	f := &flood{done: make(chan struct{})}
	for range floodWorkers {
		f.wg.Go(func() { f.work(c, url) })
	}
	t.Cleanup(func() { _, _ = f.stop() })
	return f
}

// work lists until the flood stops, an error occurs or maxFloodRequests were sent.
func (f *flood) work(c *http.Client, url string) {
	for {
		select {
		case <-f.done:
			return
		default:
		}
		r, err := get(c, url, nil)
		if !f.record(r, err) {
			return
		}
	}
}

// record keeps a reply; it reports whether to go on.
func (f *flood) record(r reply, err error) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err != nil {
		f.err = err
		return false
	}
	f.replies = append(f.replies, r)
	return len(f.replies) < maxFloodRequests
}

// count is the number of replies so far.
func (f *flood) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.replies)
}

// rejections counts the 429s so far.
func (f *flood) rejections() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return countStatus(f.replies, http.StatusTooManyRequests)
}

// stop ends the flood (once) and returns its replies and the transport error that ended a
// worker, if any.
func (f *flood) stop() ([]reply, error) {
	select {
	case <-f.done:
	default:
		close(f.done)
	}
	f.wg.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.replies, f.err
}

// testSpoofedHeaders sends front-proxy headers claiming system:masters directly to the
// sample server: without a client certificate, and with a valid client certificate of an
// ordinary user that the request-header CA did not issue. Neither is believed: both are
// classified by their real identity to the catch-all, and authorization denies them. As a
// control, the same headers from the real front-proxy certificate are believed.
func testSpoofedHeaders(t *testing.T, env *envtest.Environment, certs *pki, port int) {
	url := "https://127.0.0.1:" + strconv.Itoa(port) + widgetsPath
	ordinary, err := env.AddUser(envtest.User{Name: "ordinary"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name              string
		client            *http.Client
		status            int
		schema, priority  string
		identityInMessage string // in the Status message, or the body when it is no Status
	}{
		{"no client certificate", direct(t, certs.servingCA.pem(), nil, nil),
			http.StatusForbidden, catchAllSchema, catchAllPriority, `User "system:anonymous"`},
		{"ordinary user's certificate", direct(t, certs.servingCA.pem(), ordinary.Config().CertData, ordinary.Config().KeyData),
			http.StatusForbidden, catchAllSchema, catchAllPriority, `User "ordinary"`},
		{"control: front-proxy certificate", direct(t, certs.servingCA.pem(), certs.proxyClient.certPEM, certs.proxyClient.keyPEM),
			http.StatusOK, exemptName, exemptName, `"name":"first"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := get(tc.client, url, spoofedMaster)
			if err != nil {
				t.Fatal(err)
			}
			if r.status != tc.status || r.flowSchema != tc.schema || r.priority != tc.priority ||
				!strings.Contains(statusMessage(r.body), tc.identityInMessage) {
				t.Errorf("got %d, schema %q, priority %q: %s; want %d, %q, %q and a body with %s",
					r.status, r.flowSchema, r.priority, r.body, tc.status, tc.schema, tc.priority, tc.identityInMessage)
			}
		})
	}
}
