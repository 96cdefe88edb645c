// Package autopilot_test evaluates the autopilot's closed loop on a real kube-apiserver 1.36.3
// (envtest) with the operator running as a process (enforcement native): one deterministic
// workload whose demand shifts between two tenant levels runs twice in one test run, first
// with the configured (static) shares, then with spec.autopilot on; the test compares
// kube-apiserver's own rejection counters and queue-wait histograms of the two runs, and
// samples every level's nominal seats throughout (docs/autopilot-live.md).
package autopilot_test

import (
	"testing"

	"github.com/apf-operator/apf-operator/test/harness"
)

// kube-apiserver's server concurrency limit (SCL) is the sum of these two flags. With 600 and
// kube-apiserver's suggested levels (245 shares), a level of 6 shares gets ceil(600 x 6 /
// (245 + the pool's 27)) = 14 nominal seats: few enough that the load below overflows it, and
// enough that the pool's 27 shares cost each of kube-apiserver's levels less than 10% of its
// seats (catch-all 13 -> 12, the smallest), which the operator's default share budget requires.
const (
	maxRequestsInflight         = 400
	maxMutatingRequestsInflight = 200
)

var suite = &harness.Suite{
	Name:           "autopilot",
	ControlPlane:   &harness.ControlPlane{Flags: harness.InflightLimits(maxRequestsInflight, maxMutatingRequestsInflight)},
	BeforeOperator: startSlow,
	RunOperator:    true,
	OperatorArgs:   []string{"--enforcement=native", "--autopilot-interval=" + autopilotInterval.String()},
}

// slow is the admission webhook that holds every tenant request for serviceTime.
var slow *slowWebhook

func TestMain(m *testing.M) { harness.Main(m, suite) }

// startSlow starts the slow webhook before the operator, as the workload needs it.
func startSlow(s *harness.Suite) (err error) {
	if slow, err = startSlowWebhook(s.Cluster, serviceTime); err != nil {
		return err
	}
	s.AddCleanup(func() error { slow.Close(); return nil })
	return nil
}
