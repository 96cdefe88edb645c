package native_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apitest"
	"github.com/apf-operator/apf-operator/test/harness"
)

// The overload: a noisy tenant floods from many goroutines, bounded in requests and time.
const (
	overloadNamespace  = "overload"
	overloadConfigMaps = 30
	overloadBlob       = 64 << 10
	floodWorkers       = 40
	floodMaxRequests   = 4000
	floodDuration      = 5 * time.Second
	// The flood ends early once it has shown what the test asserts, with margins: this many
	// 429s and successes for tenant-noisy, and this many successes for tenant-quiet.
	floodEnoughRejected    = 100
	floodEnoughServed      = 10
	floodEnoughQuietServed = 5
)

// TestOverload proves that kube-apiserver enforces the projected levels: a tenant on a level
// with one seat and one queue slot that floods is rejected with 429 (counted by kube-apiserver
// against the projected level), while a tenant on another projected level is never rejected.
func TestOverload(t *testing.T) {
	resetCluster(t)
	prepareOverloadData(t)

	create(t, withoutBorrowing(rp("noisy", 6000, 1, 1, 0, 1)))
	create(t, rp("quiet", 7000, 50, 16, 4, 50))
	createDefaults(t, false) // workload-low, the backstop's level (unused here)
	create(t, fs("noisy", 1000, "noisy", apitest.And(apitest.Equals(flowv1.FieldUser, "tenant-noisy"))))
	create(t, fs("quiet", 1000, "quiet", apitest.And(apitest.Equals(flowv1.FieldUser, "tenant-quiet"))))
	startOperator(t, operatorConfig{})
	noisyPLC, quietPLC := waitProjectedRP(t, "noisy"), waitProjectedRP(t, "quiet")
	noisyFS, quietFS := waitProjectedFS(t, "noisy"), waitProjectedFS(t, "quiet")
	waitSettled(t)
	if l := nativePLC(t, noisyPLC).Spec.Limited; l == nil || ptr.Deref(l.BorrowingLimitPercent, -1) != 0 ||
		ptr.Deref(l.NominalConcurrencyShares, -1) != 1 || l.LimitResponse.Queuing == nil ||
		l.LimitResponse.Queuing.Queues != 1 || l.LimitResponse.Queuing.QueueLengthLimit != 1 {
		t.Fatalf("native level %s: %+v, want 1 share, borrowing limit 0, one queue of length 1", noisyPLC, l)
	}

	path := "/api/v1/namespaces/" + overloadNamespace + "/configmaps"
	noisyID, quietID := identity{user: "tenant-noisy"}, identity{user: "tenant-quiet"}
	expectClassified(t, noisyID, path, nativeFS(t, noisyFS).UID, nativePLC(t, noisyPLC).UID)
	expectClassified(t, quietID, path, nativeFS(t, quietFS).UID, nativePLC(t, quietPLC).UID)
	for _, id := range []identity{noisyID, quietID} {
		if r := get(t, id, path); r.status != http.StatusOK {
			t.Fatalf("LIST as %v: HTTP %d: %s", id, r.status, r.body)
		}
	}
	// kube-apiserver gives the level ceil(150 × 1 / (sum of all levels' shares)) = 1 seat.
	harness.Eventually(t, waitTimeout, "the check in TestOverload", func() error {
		if seats, found := scrapeMetric(t, "apiserver_flowcontrol_nominal_limit_seats", "priority_level", noisyPLC); !found || seats != 1 {
			return fmt.Errorf("level %s: nominal seats %v (found %t), want 1", noisyPLC, seats, found)
		}
		return nil
	})
	quietSeats, _ := scrapeMetric(t, "apiserver_flowcontrol_nominal_limit_seats", "priority_level", quietPLC)
	rejectedBefore, _ := scrapeMetric(t, "apiserver_flowcontrol_rejected_requests_total", "priority_level", noisyPLC)
	quietRejectedBefore, _ := scrapeMetric(t, "apiserver_flowcontrol_rejected_requests_total", "priority_level", quietPLC)

	list := func(id identity) apiRequest {
		return apiRequest{as: id, method: http.MethodGet, path: path, readAll: true}
	}
	ctx, cancel := context.WithTimeout(context.Background(), floodDuration)
	defer cancel()
	var flood floodResult
	var quiet quietResult
	var wg sync.WaitGroup
	var sent atomic.Int64
	start := time.Now()
	for range floodWorkers {
		wg.Go(func() {
			for ctx.Err() == nil && sent.Add(1) <= floodMaxRequests {
				r, err := send(ctx, list(noisyID))
				flood.record(r, err)
			}
		})
	}
	quietDone := make(chan struct{})
	var quietServed atomic.Int64
	go func() {
		defer close(quietDone)
		for ctx.Err() == nil && sent.Load() < floodMaxRequests {
			began := time.Now()
			// On a connection of its own: the flood's responses do not delay it on the client's side.
			req := list(quietID)
			req.client = ownConnection
			r, err := send(ctx, req)
			quiet.record(r, err, time.Since(began))
			quietServed.Store(int64(quiet.served))
		}
	}()
	go endFloodWhenShown(ctx, cancel, &flood, &quietServed)
	wg.Wait()
	cancel()
	<-quietDone
	elapsed := time.Since(start)
	rejectedAfter, _ := scrapeMetric(t, "apiserver_flowcontrol_rejected_requests_total", "priority_level", noisyPLC)
	quietRejectedAfter, _ := scrapeMetric(t, "apiserver_flowcontrol_rejected_requests_total", "priority_level", quietPLC)

	t.Logf("flood of %s (%d workers): tenant-noisy %v; kube-apiserver counted %v rejections at %s (1 seat); "+
		"tenant-quiet %v at %s (%v seats), %v rejections counted", elapsed.Round(time.Millisecond), floodWorkers,
		&flood, rejectedAfter-rejectedBefore, noisyPLC, &quiet, quietPLC, quietSeats, quietRejectedAfter-quietRejectedBefore)
	if flood.rejected == 0 {
		t.Error("tenant-noisy was never rejected: its level does not limit it")
	}
	if flood.served == 0 {
		t.Error("tenant-noisy was never served: its level has no seat")
	}
	if flood.noRetryAfter > 0 {
		t.Errorf("%d of tenant-noisy's 429 responses had no Retry-After header", flood.noRetryAfter)
	}
	if len(flood.other) > 0 {
		t.Errorf("tenant-noisy got unexpected responses: %v", flood.other)
	}
	if delta := rejectedAfter - rejectedBefore; delta < float64(flood.rejected) {
		t.Errorf("kube-apiserver counted %v rejections at level %s, fewer than the %d 429s tenant-noisy saw",
			delta, noisyPLC, flood.rejected)
	}
	if quiet.rejected > 0 || len(quiet.other) > 0 {
		t.Errorf("tenant-quiet was affected by the flood: %v, unexpected %v", &quiet, quiet.other)
	}
	// A count, not a rate: how many sequential requests fit in the flood depends on the
	// machine's load (4 in 6 s at p50 1.6 s on a loaded two-core machine, dozens when idle).
	if quiet.served == 0 {
		t.Error("tenant-quiet was never served during the flood")
	}
	if d := quietRejectedAfter - quietRejectedBefore; d != 0 {
		t.Errorf("kube-apiserver counted %v rejections at tenant-quiet's level %s", d, quietPLC)
	}
}

// endFloodWhenShown cancels the flood once tenant-noisy has been both rejected and served, and
// tenant-quiet served, often enough for the test's assertions (see floodEnoughRejected).
func endFloodWhenShown(ctx context.Context, cancel func(), flood *floodResult, quietServed *atomic.Int64) {
	for ctx.Err() == nil {
		flood.mu.Lock()
		shown := flood.rejected >= floodEnoughRejected && flood.served >= floodEnoughServed
		flood.mu.Unlock()
		if shown && quietServed.Load() >= floodEnoughQuietServed {
			cancel()
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// prepareOverloadData creates the namespace, enough ConfigMap data that a LIST takes
// milliseconds, and RBAC letting both tenants list it.
func prepareOverloadData(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: overloadNamespace}})
	blob := strings.Repeat("x", overloadBlob)
	for i := range overloadConfigMaps {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("blob-%02d", i), Namespace: overloadNamespace},
			Data: map[string]string{"blob": blob}}
		if err := k8s.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	create(t, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "list-configmaps", Namespace: overloadNamespace},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list"}}}})
	create(t, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "list-configmaps", Namespace: overloadNamespace},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "list-configmaps"},
		Subjects: []rbacv1.Subject{
			{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "tenant-noisy"},
			{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "tenant-quiet"},
		}})
}

// floodResult counts what the flooding tenant saw.
type floodResult struct {
	mu                                   sync.Mutex
	served, rejected, noRetryAfter, lost int
	other                                []string
}

func (f *floodResult) record(r apiResponse, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case err != nil && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)):
		f.lost++ // in flight when the flood ended
	case err != nil:
		f.other = append(f.other, err.Error())
	case r.status == http.StatusOK:
		f.served++
	case r.status == http.StatusTooManyRequests:
		f.rejected++
		if r.retryAfter == "" {
			f.noRetryAfter++
		}
	default:
		if len(f.other) < 5 {
			f.other = append(f.other, fmt.Sprintf("HTTP %d: %s", r.status, r.body))
		}
	}
}

func (f *floodResult) String() string {
	return fmt.Sprintf("%d served, %d rejected with 429, %d cut off at the end", f.served, f.rejected, f.lost)
}

// quietResult is what the sequential tenant saw.
type quietResult struct {
	served, rejected, lost int
	other                  []string
	latencies              []time.Duration
}

func (q *quietResult) record(r apiResponse, err error, took time.Duration) {
	switch {
	case err != nil && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)):
		q.lost++
	case err != nil:
		q.other = append(q.other, err.Error())
	case r.status == http.StatusOK:
		q.served++
		q.latencies = append(q.latencies, took)
	case r.status == http.StatusTooManyRequests:
		q.rejected++
	default:
		q.other = append(q.other, fmt.Sprintf("HTTP %d: %s", r.status, r.body))
	}
}

func (q *quietResult) String() string {
	l := append([]time.Duration(nil), q.latencies...)
	sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
	p50, worst := time.Duration(0), time.Duration(0)
	if len(l) > 0 {
		p50, worst = l[len(l)/2], l[len(l)-1]
	}
	return fmt.Sprintf("%d served (latency p50 %s, max %s), %d rejected with 429", q.served,
		p50.Round(time.Millisecond), worst.Round(time.Millisecond), q.rejected)
}

// withoutBorrowing sets level's borrowingLimitPercent to 0, so that its seats are its own
// nominal ones only, and returns it.
func withoutBorrowing(level *flowv1.RequestPriority) *flowv1.RequestPriority {
	level.Spec.BorrowingLimitPercent = ptr.To[int32](0)
	return level
}
