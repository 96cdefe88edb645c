package webhooks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/eventratelimit"
)

// eventReply is what kube-apiserver answered to one event creation.
type eventReply struct {
	code       int
	retryAfter string
	status     metav1.Status
}

// eventPoster creates events with raw HTTP requests, so that client-go's automatic retry of
// 429 responses with Retry-After cannot hide a rejection, and the header can be read.
type eventPoster struct {
	client *http.Client
	host   string
}

func newEventPoster(t *testing.T, cfg *rest.Config) *eventPoster {
	t.Helper()
	c, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &eventPoster{client: c, host: strings.TrimSuffix(cfg.Host, "/")}
}

// post creates an event named name in ns through core/v1 (events.k8s.io/v1 when eventsAPI),
// about the pod object and reported by component.
func (p *eventPoster) post(t *testing.T, eventsAPI bool, ns, name, object, component string) eventReply {
	t.Helper()
	ref := map[string]any{"apiVersion": "v1", "kind": "Pod", "namespace": ns, "name": object, "uid": "uid-" + object}
	body := map[string]any{"apiVersion": "v1", "kind": "Event", "metadata": map[string]any{"name": name},
		"involvedObject": ref, "reason": "Test", "message": "m", "type": "Normal",
		"source": map[string]any{"component": component, "host": "node-1"}}
	url := p.host + "/api/v1/namespaces/" + ns + "/events"
	if eventsAPI {
		body = map[string]any{"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": map[string]any{"name": name},
			"regarding": ref, "reason": "Test", "note": "m", "type": "Normal", "action": "Tested",
			"reportingController": component, "reportingInstance": "node-1", "eventTime": time.Now().UTC().Format("2006-01-02T15:04:05.000000Z07:00")}
		url = p.host + "/apis/events.k8s.io/v1/namespaces/" + ns + "/events"
	}
	data, _ := json.Marshal(body)
	resp, err := p.client.Post(url, "application/json", bytes.NewReader(data))
	if err != nil {
		t.Errorf("posting event %s/%s: %v", ns, name, err)
		return eventReply{}
	}
	defer func() { _ = resp.Body.Close() }()
	raw, _ := io.ReadAll(resp.Body)
	r := eventReply{code: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After")}
	if resp.StatusCode >= 300 {
		_ = json.Unmarshal(raw, &r.status)
	}
	return r
}

// postConcurrently sends n core/v1 event creations into ns at once and returns the replies.
func (p *eventPoster) postConcurrently(t *testing.T, ns, prefix string, n int) []eventReply {
	replies := make([]eventReply, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			replies[i] = p.post(t, false, ns, prefix+strconv.Itoa(i), "pod-"+strconv.Itoa(i), "test")
		}()
	}
	close(start)
	wg.Wait()
	return replies
}

// tally counts created (201) and rate-limited (429) replies and checks every 429 carries
// Retry-After and the status details kube-apiserver took it from.
func tally(t *testing.T, replies []eventReply) (created, limited int) {
	t.Helper()
	for _, r := range replies {
		switch r.code {
		case http.StatusCreated:
			created++
		case http.StatusTooManyRequests:
			limited++
			secs, err := strconv.Atoi(r.retryAfter)
			if err != nil || secs < 1 {
				t.Errorf("429 without a Retry-After of at least one second: %q", r.retryAfter)
			}
			if r.status.Reason != metav1.StatusReasonTooManyRequests || r.status.Details == nil ||
				r.status.Details.RetryAfterSeconds != int32(secs) {
				t.Errorf("429 status %+v does not carry reason TooManyRequests and retryAfterSeconds %d", r.status, secs)
			}
		default:
			t.Errorf("unexpected reply %d: %+v", r.code, r.status)
		}
	}
	return created, limited
}

func createNamespaces(t *testing.T, s *suite, names ...string) {
	t.Helper()
	for _, n := range names {
		if err := s.admin.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}}); err != nil {
			t.Fatal(err)
		}
	}
}

// relaxEventsWebhookTimeout raises the generated events webhook's timeoutSeconds (1) to 10 in the
// test cluster: with failurePolicy Ignore, a call that times out on a loaded test machine would
// admit its event silently and turn an exact count into a flake. Everything else of the
// generated configuration stays as shipped.
func relaxEventsWebhookTimeout(t *testing.T, s *suite) {
	t.Helper()
	ctx := context.Background()
	var list admissionregistrationv1.ValidatingWebhookConfigurationList
	if err := s.admin.List(ctx, &list); err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		cfg := &list.Items[i]
		for j := range cfg.Webhooks {
			if cfg.Webhooks[j].Name == "vevents.flowcontrol.apf-operator.io" {
				cfg.Webhooks[j].TimeoutSeconds = ptr.To[int32](10)
				if err := s.admin.Update(ctx, cfg); err != nil {
					t.Fatal(err)
				}
				return
			}
		}
	}
	t.Fatal("the generated webhook configuration has no events webhook")
}

// enforced numbers the configurations enforce makes.
var enforced int

// enforce makes the suite's events engine enforce specs until the test ends. The bucket clock
// stands still until the test steps it, so refills during the burst cannot blur the counts.
func enforce(t *testing.T, s *suite, specs ...v1alpha1.EventRateLimitSpec) {
	t.Helper()
	var cs []eventratelimit.Config
	for i, spec := range specs {
		enforced++ // a new name each time: the engine keeps the buckets of a known name and generation
		cs = append(cs, eventratelimit.Config{Name: fmt.Sprintf("%s-%d-%d", t.Name(), enforced, i), Generation: 1, Spec: spec})
	}
	s.events.Update(cs)
	t.Cleanup(func() { s.events.Update(nil) })
}

// TestEventRateLimitSeedExample is the scenario against the real kube-apiserver with
// the generated webhook configuration: limits server {qps 100, burst 1000} and namespace
// {qps 10, burst 100, cacheSize 50}; 150 concurrent event creations in one namespace give
// exactly 100 created and 50 HTTP 429 with Retry-After; another namespace is still admitted;
// after one second (of the buckets' clock) exactly 10 more are.
func TestEventRateLimitSeedExample(t *testing.T) {
	s := envSuite(t)
	createNamespaces(t, s, "erl-a", "erl-b")
	relaxEventsWebhookTimeout(t, s)
	enforce(t, s, v1alpha1.EventRateLimitSpec{Limits: []v1alpha1.EventRateLimitLimit{
		{Type: v1alpha1.EventRateLimitServer, QPS: 100, Burst: 1000},
		{Type: v1alpha1.EventRateLimitNamespace, QPS: 10, Burst: 100, CacheSize: ptr.To[int32](50)},
	}})
	p := newEventPoster(t, s.cfg)
	created, limited := tally(t, p.postConcurrently(t, "erl-a", "burst-", 150))
	if created != 100 || limited != 50 {
		t.Fatalf("of 150 concurrent creates: %d created, %d rate-limited; want 100 and 50", created, limited)
	}
	if r := p.post(t, false, "erl-b", "other", "pod-x", "test"); r.code != http.StatusCreated {
		t.Fatalf("another namespace must still be admitted: %d %+v", r.code, r.status)
	}
	s.eventsClock.SetTime(s.eventsClock.Now().Add(time.Second))
	created, limited = tally(t, p.postConcurrently(t, "erl-a", "later-", 20))
	if created != 10 || limited != 10 {
		t.Fatalf("a second later, of 20 creates: %d created, %d rate-limited; want 10 and 10", created, limited)
	}
}

// TestEventRateLimitSourceAndObjectBothAPIs: one event source and object share a bucket
// whichever events API reports it; a different object has its own; the user comes from the
// authenticated request.
func TestEventRateLimitSourceAndObjectBothAPIs(t *testing.T) {
	s := envSuite(t)
	createNamespaces(t, s, "erl-src")
	enforce(t, s, v1alpha1.EventRateLimitSpec{Limits: []v1alpha1.EventRateLimitLimit{
		{Type: v1alpha1.EventRateLimitSourceAndObject, QPS: 1, Burst: 2},
	}})
	p := newEventPoster(t, s.cfg)
	for i, c := range []struct {
		eventsAPI bool
		object    string
		want      int
	}{
		{true, "pod-a", http.StatusCreated},
		{false, "pod-a", http.StatusCreated},
		{true, "pod-a", http.StatusTooManyRequests},
		{false, "pod-a", http.StatusTooManyRequests},
		{false, "pod-b", http.StatusCreated},
	} {
		if r := p.post(t, c.eventsAPI, "erl-src", "ev-"+strconv.Itoa(i), c.object, "kubelet"); r.code != c.want {
			t.Fatalf("event %d (events.k8s.io=%v, %s): %d %+v, want %d", i, c.eventsAPI, c.object, r.code, r.status, c.want)
		}
	}
	enforce(t, s, v1alpha1.EventRateLimitSpec{Limits: []v1alpha1.EventRateLimitLimit{
		{Type: v1alpha1.EventRateLimitUser, QPS: 1, Burst: 1},
	}})
	if r := p.post(t, false, "erl-src", "user-1", "pod-c", "kubelet"); r.code != http.StatusCreated {
		t.Fatalf("first event of the admin user: %d", r.code)
	}
	if r := p.post(t, true, "erl-src", "user-2", "pod-d", "other"); r.code != http.StatusTooManyRequests {
		t.Fatalf("second event of the same user: %d, want 429", r.code)
	}
}
