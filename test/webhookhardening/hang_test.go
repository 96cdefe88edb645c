package webhookhardening

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apf-operator/apf-operator/test/harness"
)

// events is how many events each phase creates (eventsAtOnce at a time).
var events = flag.Int("hardening.events", 20, "event creations per phase of TestHungOperator")

// timeout is the generated events webhook's timeoutSeconds (config/webhook, from the marker in
// webhooks/events.go), which the harness registers in kube-apiserver.
const timeout = time.Second

// hangBound bounds each creation while the operator hangs: well above the timeout, so that a
// loaded machine's slow kube-apiserver passes, and at half kube-apiserver's default webhook
// timeout (10 s), so that a registration without the shipped timeout fails. The latencies
// themselves are logged.
const hangBound = 5 * time.Second

// TestHungOperator: while the operator is stopped (SIGSTOP: its port still accepts
// connections, nothing answers), every event creation (eventsAtOnce in flight at a time)
// returns within hangBound (the shipped timeout applies, not kube-apiserver's default) and the
// event is created (failurePolicy Ignore). The latencies with the operator running and stopped
// are logged (p50, max).
func TestHungOperator(t *testing.T) {
	cfg := rest.CopyConfig(cluster.Config)
	cfg.QPS = -1 // no client-side rate limit: the latencies are kube-apiserver's
	c, err := client.New(cfg, client.Options{Scheme: k8s.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	checkRegisteredTimeout(t)
	running := createEvents(t, c, "running", *events)
	t.Logf("operator running: %s", summary(running))

	pid := operator.PID()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			_ = syscall.Kill(pid, syscall.SIGCONT)
		}
	}
	t.Cleanup(resume)
	stopped := createEvents(t, c, "stopped", *events)
	resume()
	t.Logf("operator stopped (SIGSTOP), timeoutSeconds %d: %s", int(timeout.Seconds()), summary(stopped))
	for i, d := range stopped {
		if d > hangBound {
			t.Errorf("event %d took %s while the operator was stopped; want at most %s", i, d, hangBound)
		}
	}
	harness.Eventually(t, 30*time.Second, "the webhook to serve again after SIGCONT", func() error {
		_, err := review(webhookAddr, apiServerCert, apiServerKey, "u")
		return err
	})
}

// checkRegisteredTimeout: kube-apiserver has the events webhook with the shipped timeout and
// failurePolicy Ignore, so that the test measures the shipped registration.
func checkRegisteredTimeout(t *testing.T) {
	t.Helper()
	var list admissionregistrationv1.ValidatingWebhookConfigurationList
	if err := k8s.List(context.Background(), &list); err != nil {
		t.Fatal(err)
	}
	for _, cfg := range list.Items {
		for _, w := range cfg.Webhooks {
			if w.Name != "vevents.flowcontrol.apf-operator.io" {
				continue
			}
			if w.TimeoutSeconds == nil || time.Duration(*w.TimeoutSeconds)*time.Second != timeout ||
				w.FailurePolicy == nil || *w.FailurePolicy != admissionregistrationv1.Ignore {
				t.Fatalf("the registered events webhook has timeoutSeconds %v, failurePolicy %v; want %s, Ignore",
					ptr.Deref(w.TimeoutSeconds, 0), ptr.Deref(w.FailurePolicy, ""), timeout)
			}
			return
		}
	}
	t.Fatal("kube-apiserver has no events webhook registered")
}

// eventsAtOnce is how many of a phase's event creations are in flight together: while the
// operator hangs each one waits out the webhook's timeout, and five at a time make a phase of
// twenty take four timeouts instead of twenty. Each creation still gets its own webhook call
// and its own deadline, so each is checked against hangBound as before.
const eventsAtOnce = 5

// createEvents creates n events, eventsAtOnce at a time, checks each was created, and returns
// each creation's latency.
func createEvents(t *testing.T, c client.Client, prefix string, n int) []time.Duration {
	t.Helper()
	out := make([]time.Duration, n)
	errs := make([]error, n)
	slots := make(chan struct{}, eventsAtOnce)
	var wg sync.WaitGroup
	for i := range n {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			out[i], errs[i] = createEvent(c, prefix, i)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// createEvent creates the i-th event of a phase, checks it was stored, and returns how long the
// creation took.
func createEvent(c client.Client, prefix string, i int) (time.Duration, error) {
	ctx := context.Background()
	ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: fmt.Sprintf("%s-%d", prefix, i)},
		InvolvedObject: corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: namespace, Name: fmt.Sprintf("%s-pod-%d", prefix, i)},
		Reason:         "Test", Message: "m", Type: corev1.EventTypeNormal, Source: corev1.EventSource{Component: "test"}}
	reqCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	start := time.Now()
	err := c.Create(reqCtx, ev)
	took := time.Since(start)
	if err != nil {
		return took, fmt.Errorf("creating event %s: %w (after %s)", ev.Name, err, took)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(ev), &corev1.Event{}); err != nil {
		return took, fmt.Errorf("event %s was not stored: %w", ev.Name, err)
	}
	return took, nil
}

// summary is "n=20 p50=... max=..." of ds.
func summary(ds []time.Duration) string {
	s := slices.Clone(ds)
	slices.Sort(s)
	return fmt.Sprintf("n=%d p50=%s max=%s", len(s), s[len(s)/2].Round(time.Millisecond), s[len(s)-1].Round(time.Millisecond))
}
