package controllers

import (
	"context"
	"errors"
	"testing"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/native"
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
	if !r.read(ctx) || r.read(ctx) {
		t.Error("the first read must report a change, the same seats again none")
	}
	fail = true
	if r.read(ctx) || r.get() == nil {
		t.Error("a failed read must keep the last seats and report no change")
	}
}

// TestApplySeats: a projected RequestPriority's view gets its native level's seats, level 0 the
// exempt level's; one not projected gets none.
func TestApplySeats(t *testing.T) {
	snap := &snapshot{plan: &native.Plan{}, rps: map[string]objectView{
		"tenant": {projection: native.Result{Projected: true, Reason: flowv1.ReasonProjected, NativeName: "apf-tenant"}},
		"top":    {projection: native.Result{Projected: true, Reason: flowv1.ReasonProjected, NativeName: native.ExemptLevelName}},
		"big":    {projection: native.Result{Reason: flowv1.ReasonOverBudget}},
	}}
	seats, err := parseSeats([]byte(seatsMetrics))
	if err != nil {
		t.Fatal(err)
	}
	snap.applySeats(seats)
	if s := snap.rps["tenant"].nativeSeats; s == nil || *s != 3 {
		t.Errorf("tenant seats %v, want 3", s)
	}
	if s := snap.rps["top"].nativeSeats; s == nil || *s != 0 {
		t.Errorf("top seats %v, want 0", s)
	}
	if s := snap.rps["big"].nativeSeats; s != nil {
		t.Errorf("big (not projected) seats %d, want none", *s)
	}
}
