package controllers

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apfmetrics"
)

// rejections is a /metrics text where level apf-t's FlowSchema apf-t has n queue-full
// rejections.
func rejections(t *testing.T, n int) apfmetrics.Families {
	t.Helper()
	f, err := apfmetrics.Parse([]byte(fmt.Sprintf(
		`apiserver_flowcontrol_rejected_requests_total{flow_schema="apf-t",priority_level="apf-t",reason="queue-full"} %d
apiserver_flowcontrol_rejected_requests_total{flow_schema="other",priority_level="apf-t",reason="time-out"} 1
`, n)), apfmetrics.RejectedMetric)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestRejectionWindow(t *testing.T) {
	var w rejectionWindow
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if w.update(rejections(t, 10), t0) || w.get() != nil {
		t.Fatal("one read gives counts")
	}
	if w.update(rejections(t, 50), t0.Add(30*time.Second)) {
		t.Error("a read within a minute of the last one changed the counts")
	}
	if !w.update(rejections(t, 50), t0.Add(time.Minute)) {
		t.Fatal("40 rejections in a minute: no change")
	}
	if got := w.get(); got.schemas["apf-t"] != 40 || got.levels["apf-t"] != 40 || got.schemas["other"] != 0 {
		t.Errorf("counts = %+v, want 40 at apf-t, none at other (it did not grow)", got)
	}
	// Same counter a minute later: the window still holds the 40.
	if w.update(rejections(t, 50), t0.Add(2*time.Minute)) {
		t.Error("unchanged counts reported as a change")
	}
	// Six minutes on, the 40 fall out of the 5-minute window.
	for m := 3; m <= 6; m++ {
		w.update(rejections(t, 50), t0.Add(time.Duration(m)*time.Minute))
	}
	if got := w.get(); len(got.schemas) != 0 || !got.at.Equal(t0.Add(6*time.Minute)) {
		t.Errorf("after the window: %+v, want no rejections", got)
	}
	if n := len(w.samples); n > 7 {
		t.Errorf("%d samples kept: the window must stay bounded", n)
	}
	// kube-apiserver restarted: its counter starts over at 3.
	if !w.update(rejections(t, 3), t0.Add(7*time.Minute)) || w.get().schemas["apf-t"] != 3 {
		t.Errorf("after a restart: %+v, want 3", w.get())
	}
}

// TestRejectionWindowFollowsThePeriod: with /metrics read every period, a summary needs two
// samples summaryInterval(period) apart, and each summary counts once.
func TestRejectionWindowFollowsThePeriod(t *testing.T) {
	const period = 2 * time.Second
	w := rejectionWindow{minInterval: summaryInterval(period), summaries: prometheus.NewCounter(prometheus.CounterOpts{Name: "s"})}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w.update(rejections(t, 10), t0)
	if w.update(rejections(t, 20), t0.Add(period)) || testutil.ToFloat64(w.summaries) != 0 {
		t.Errorf("a summary one period after the first read (%v computed)", testutil.ToFloat64(w.summaries))
	}
	if !w.update(rejections(t, 20), t0.Add(2*period)) || w.get().schemas["apf-t"] != 10 {
		t.Fatalf("two periods on: %+v, want 10 rejections at apf-t", w.get())
	}
	if w.update(rejections(t, 20), t0.Add(4*period)) {
		t.Error("unchanged counts reported as a change")
	}
	if got := testutil.ToFloat64(w.summaries); got != 2 {
		t.Errorf("%v summaries counted, want 2", got)
	}
	if trafficMinInterval != summaryInterval(DefaultNativeSeatsPeriod) || trafficMinInterval != time.Minute {
		t.Errorf("the default summary interval is %s, want a minute (the documented default)", trafficMinInterval)
	}
}

func TestObservedStatus(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 5, 0, 0, time.UTC)
	stored := &flowv1.ObservedTraffic{RejectedLast5m: 7, WindowEnd: metav1.NewTime(at.Add(-time.Minute))}
	for _, c := range []struct {
		name     string
		stored   *flowv1.ObservedTraffic
		rejected *int64
		want     *flowv1.ObservedTraffic
	}{
		{"unknown keeps the stored one", stored, nil, stored},
		{"never rejected stays unset", nil, ptr.To[int64](0), nil},
		{"same count keeps the stored one (no write)", stored, ptr.To[int64](7), stored},
		{"a new count is written", stored, ptr.To[int64](9), &flowv1.ObservedTraffic{RejectedLast5m: 9, WindowEnd: metav1.NewTime(at)}},
		{"back to zero is written", stored, ptr.To[int64](0), &flowv1.ObservedTraffic{RejectedLast5m: 0, WindowEnd: metav1.NewTime(at)}},
		{"a first rejection is written", nil, ptr.To[int64](1), &flowv1.ObservedTraffic{RejectedLast5m: 1, WindowEnd: metav1.NewTime(at)}},
	} {
		got := observedStatus(c.stored, objectView{rejected: c.rejected, observedAt: at})
		if (got == nil) != (c.want == nil) || got != nil && (got.RejectedLast5m != c.want.RejectedLast5m || !got.WindowEnd.Equal(&c.want.WindowEnd)) {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}
