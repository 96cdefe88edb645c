package webhookhardening

import (
	"context"
	"flag"
	"fmt"
	"slices"
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

// events is how many events each phase creates, one after the other.
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
// connections, nothing answers), every event creation returns within hangBound (the shipped
// timeout applies, not kube-apiserver's default) and the event is created (failurePolicy Ignore). The latencies with the
// operator running and stopped are logged (p50, max).
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

// createEvents creates n events one after the other, checks each was created, and returns
// each creation's latency.
func createEvents(t *testing.T, c client.Client, prefix string, n int) []time.Duration {
	t.Helper()
	ctx := context.Background()
	out := make([]time.Duration, 0, n)
	for i := range n {
		ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: fmt.Sprintf("%s-%d", prefix, i)},
			InvolvedObject: corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: namespace, Name: fmt.Sprintf("%s-pod-%d", prefix, i)},
			Reason:         "Test", Message: "m", Type: corev1.EventTypeNormal, Source: corev1.EventSource{Component: "test"}}
		reqCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		start := time.Now()
		err := c.Create(reqCtx, ev)
		out = append(out, time.Since(start))
		cancel()
		if err != nil {
			t.Fatalf("creating event %s: %v (after %s)", ev.Name, err, out[i])
		}
		if err := c.Get(ctx, client.ObjectKeyFromObject(ev), &corev1.Event{}); err != nil {
			t.Fatalf("event %s was not stored: %v", ev.Name, err)
		}
	}
	return out
}

// summary is "n=20 p50=... max=..." of ds.
func summary(ds []time.Duration) string {
	s := slices.Clone(ds)
	slices.Sort(s)
	return fmt.Sprintf("n=%d p50=%s max=%s", len(s), s[len(s)/2].Round(time.Millisecond), s[len(s)-1].Round(time.Millisecond))
}
