package controllers

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/internal/nativeview"
)

const seatsMetrics = `# HELP apiserver_flowcontrol_nominal_limit_seats [BETA] Nominal number of execution seats configured for each priority level
# TYPE apiserver_flowcontrol_nominal_limit_seats gauge
apiserver_flowcontrol_nominal_limit_seats{priority_level="catch-all"} 4
apiserver_flowcontrol_nominal_limit_seats{priority_level="exempt"} 0
apiserver_flowcontrol_nominal_limit_seats{priority_level="apf-tenant"} 3
# HELP apiserver_flowcontrol_upper_limit_seats [ALPHA] Configured upper bound on number of execution seats available to each priority level
# TYPE apiserver_flowcontrol_upper_limit_seats gauge
apiserver_flowcontrol_upper_limit_seats{priority_level="exempt"} 150
apiserver_flowcontrol_upper_limit_seats{priority_level="catch-all"} 154
# HELP apiserver_request_total [STABLE] Counter of apiserver requests
# TYPE apiserver_request_total counter
apiserver_request_total{code="200",verb="GET"} 12
`

func TestParseSeats(t *testing.T) {
	got, err := parseSeats([]byte(seatsMetrics))
	if err != nil {
		t.Fatal(err)
	}
	if got.scl != 150 || len(got.nominal) != 3 || got.nominal["apf-tenant"] != 3 || got.nominal["catch-all"] != 4 {
		t.Errorf("parseSeats = %+v, want SCL 150 and 3 levels", got)
	}
	if _, err := parseSeats([]byte("apiserver_request_total 1\n")); err == nil {
		t.Error("metrics without nominal seats parsed without error")
	}
}

// TestSeatReader: a change is reported once; a failure keeps the last seats.
func TestSeatReader(t *testing.T) {
	body, fail := []byte(seatsMetrics), false
	r := &seatReader{fetch: func(context.Context) ([]byte, error) {
		if fail {
			return nil, errors.New("forbidden")
		}
		return body, nil
	}}
	ctx := context.Background()
	if !r.read(ctx, true) || r.read(ctx, true) {
		t.Error("the first read must report a change, the same seats again none")
	}
	fail = true
	if r.read(ctx, true) || r.get() == nil {
		t.Error("a failed read must keep the last seats and report no change")
	}
}

// TestApplySeats: a RequestPriority the plan projects gets its native level's seats by
// kube-apiserver's arithmetic over the levels the plan leaves (ceil(150 × 10 / 250) = 6 here,
// where the metric still says 3), level 0 the exempt level's, one not projected none; without
// the server's concurrency limit, the metric's value.
func TestApplySeats(t *testing.T) {
	exempt := plc(native.ExemptLevelName, nil)
	exempt.Spec = flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementExempt,
		Exempt: &flowcontrolv1.ExemptPriorityLevelConfiguration{}}
	owned := plc("apf-gone", ptr.To[int32](1000)) // owned and not planned: no longer counts
	owned.Labels = map[string]string{flowv1.LabelManagedBy: flowv1.ManagedByValue}
	owned.Annotations = map[string]string{flowv1.AnnotationSource: "RequestPriority/gone"}
	build := func() *snapshot {
		return &snapshot{
			natives: native.Existing{PriorityLevels: []flowcontrolv1.PriorityLevelConfiguration{
				exempt, plc("catch-all", ptr.To[int32](5)), plc("workload-low", nil), owned}},
			plan: &native.Plan{
				PriorityLevels: []flowcontrolv1.PriorityLevelConfiguration{plc("apf-tenant", ptr.To[int32](10)),
					plc("apf-other", ptr.To[int32](205))},
				RequestPriorities: map[string]native.Result{
					"tenant": {Projected: true, Reason: flowv1.ReasonProjected, NativeName: "apf-tenant"},
					"top":    {Projected: true, Reason: flowv1.ReasonProjected, NativeName: native.ExemptLevelName},
					"big":    {Reason: flowv1.ReasonOverBudget},
				}},
			// The views wait for their native objects (Pending): the plan decides.
			rps: map[string]objectView{"tenant": {projection: native.Result{Reason: flowv1.ReasonPending}},
				"top": {}, "big": {projection: native.Result{Reason: flowv1.ReasonOverBudget}}},
		}
	}
	seats, err := parseSeats([]byte(seatsMetrics))
	if err != nil {
		t.Fatal(err)
	}
	snap := build()
	snap.applySeats(seats) // 10 of 0 + 5 + 30 + 10 + 205 = 250 shares, 150 seats
	for name, want := range map[string]int32{"tenant": 6, "top": 0} {
		if s := snap.rps[name].nativeSeats; s == nil || *s != want {
			t.Errorf("%s seats %v, want %d", name, s, want)
		}
	}
	if s := snap.rps["big"].nativeSeats; s != nil {
		t.Errorf("big (not projected) seats %d, want none", *s)
	}
	seats.scl = 0
	snap = build()
	snap.applySeats(seats)
	if s := snap.rps["tenant"].nativeSeats; s == nil || *s != 3 {
		t.Errorf("tenant seats without the concurrency limit %v, want the metric's 3", s)
	}
}

func plc(name string, shares *int32) flowcontrolv1.PriorityLevelConfiguration {
	return flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: shares}}}
}

// TestSeatsAgreeWithNativeview: the operator's seats and nativeview's (what explain and the
// CLI show) are read by internal/apfmetrics alone, so they agree on the same /metrics text: a
// real kube-apiserver 1.36's (limit 600), and its APF controller's at a limit of 598, whose
// nominal seats are those of 600 (a search over the nominal seats, nativeview's former way, took
// 600 there).
func TestSeatsAgreeWithNativeview(t *testing.T) {
	for file, limit := range map[string]int64{"kube-apiserver-1.36.3.metrics": 600, "bootstrap-598.metrics": 598} {
		raw, err := os.ReadFile(filepath.Join("..", "internal", "apfmetrics", "testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		ours, err := parseSeats(raw)
		if err != nil {
			t.Fatal(err)
		}
		view := nativeview.Bootstrap().WithMetrics(raw)
		if ours.scl != limit || view.ServerSeats() != limit || view.SeatsError != nil {
			t.Errorf("%s: server limit %d here, %d in nativeview (%v); want %d", file, ours.scl, view.ServerSeats(),
				view.SeatsError, limit)
		}
		for _, l := range view.PriorityLevels() {
			n := view.NominalSeats(l.Name)
			if got, ok := ours.nominal[l.Name]; !ok || n == nil || int64(got) != *n {
				t.Errorf("%s: %s has %d seats here, %v in nativeview", file, l.Name, got, n)
			}
		}
	}
}
