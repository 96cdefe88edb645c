package dispatch_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/apf-operator/apf-operator/internal/apf/dispatch"
	"github.com/apf-operator/apf-operator/internal/apf/metrics"
)

// TestLimitMetrics: every limited level exports its ACV and its lower and upper seat limits
// (lendablePercent and borrowingLimitPercent applied to the ACV, as kube-apiserver's
// apiserver_flowcontrol_lower_limit_seats and upper_limit_seats), and a removed level's
// series leave.
func TestLimitMetrics(t *testing.T) {
	const scl = 100
	reg := prometheus.NewPedanticRegistry()
	lender := lvl{name: "lender", level: 100, shares: 30, queues: 1, limit: 10, lend: ptr(50), borrow: ptr(20)}
	free := lvl{name: "free", level: 200, shares: 70, queues: 1, limit: 10}
	d := dispatch.New(buildConfig(t, lender, free), dispatch.Options{ServerConcurrencyLimit: scl,
		Metrics: metrics.NewMetrics(reg)})

	acv := assured(d)
	if acv["lender"] < 10 || acv["free"] < 10 {
		t.Fatalf("ACVs %v: the test needs at least 10 seats per level to tell the limits apart", acv)
	}
	want := map[string]map[string]float64{
		"lender": {
			"apf_operator_assured_concurrency_limit": acv["lender"],
			"apf_operator_lower_limit_seats":         acv["lender"] - roundPercent(acv["lender"], 50),
			"apf_operator_upper_limit_seats":         acv["lender"] + roundPercent(acv["lender"], 20),
		},
		"free": { // lendablePercent absent: every seat may be lent; no borrowing limit
			"apf_operator_assured_concurrency_limit": acv["free"],
			"apf_operator_lower_limit_seats":         0,
			"apf_operator_upper_limit_seats":         scl,
		},
	}
	if got := limitGauges(t, reg); !equalGauges(got, want) {
		t.Fatalf("limit gauges\n got %v\nwant %v", got, want)
	}

	d.Update(buildConfig(t, free))
	delete(want, "lender")
	want["free"]["apf_operator_assured_concurrency_limit"] = assured(d)["free"] // all seats are its own now
	if got := limitGauges(t, reg); !equalGauges(got, want) {
		t.Fatalf("after removing level lender, limit gauges\n got %v\nwant %v", got, want)
	}
}

// assured returns the ACV of every level of d.
func assured(d *dispatch.Dispatcher) map[string]float64 {
	acv := map[string]float64{}
	for _, l := range d.Snapshot().Levels {
		acv[l.Name] = float64(l.AssuredConcurrency)
	}
	return acv
}

// roundPercent is round(x * p / 100), half away from zero.
func roundPercent(x float64, p int) float64 { return float64(int(x*float64(p)/100 + 0.5)) }

// limitGauges returns the limit gauges in reg by level and metric name.
func limitGauges(t *testing.T, reg *prometheus.Registry) map[string]map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]float64{}
	for _, mf := range families {
		switch mf.GetName() {
		case "apf_operator_assured_concurrency_limit", "apf_operator_lower_limit_seats", "apf_operator_upper_limit_seats":
		default:
			continue
		}
		for _, m := range mf.GetMetric() {
			level := labelValue(m, metrics.LabelPriorityLevel)
			if got[level] == nil {
				got[level] = map[string]float64{}
			}
			got[level][mf.GetName()] = m.GetGauge().GetValue()
		}
	}
	return got
}

func labelValue(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func equalGauges(a, b map[string]map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for level, am := range a {
		bm := b[level]
		if len(am) != len(bm) {
			return false
		}
		for name, v := range am {
			if w, ok := bm[name]; !ok || w != v {
				return false
			}
		}
	}
	return true
}
