// Package autopilot_test evaluates the autopilot's closed loop on a real kube-apiserver 1.36.3
// (envtest) with the operator running as a process (enforcement native): one deterministic
// workload whose demand shifts between two tenant levels runs twice in one test run, first
// with the configured (static) shares, then with spec.autopilot on; the test compares
// kube-apiserver's own rejection counters and queue-wait histograms of the two runs, and
// samples every level's nominal seats throughout (docs/autopilot-live.md).
package autopilot_test

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/log"

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

var (
	cluster  *harness.Cluster
	operator *harness.Operator
	// slow is the admission webhook that holds every tenant request for serviceTime.
	slow *slowWebhook
)

func TestMain(m *testing.M) {
	log.SetLogger(logr.Discard())
	code, err := runSuite(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "autopilot suite:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

func runSuite(m *testing.M) (code int, err error) {
	dir, err := os.MkdirTemp("", "apf-autopilot-")
	if err != nil {
		return 1, err
	}
	defer os.RemoveAll(dir)
	binary, err := harness.BuildOperator(dir)
	if err != nil {
		return 1, err
	}
	if cluster, err = harness.StartWith(map[string]string{
		"max-requests-inflight":          strconv.Itoa(maxRequestsInflight),
		"max-mutating-requests-inflight": strconv.Itoa(maxMutatingRequestsInflight),
	}); err != nil {
		return 1, err
	}
	defer func() { err = joinErr(err, cluster.Stop()) }()
	if slow, err = startSlowWebhook(cluster, serviceTime); err != nil {
		return 1, err
	}
	defer slow.Close()
	args := append(cluster.OperatorArgs("0"), "--enforcement=native", "--autopilot-interval="+autopilotInterval.String())
	if operator, err = cluster.StartOperator(binary, args...); err != nil {
		return 1, err
	}
	defer func() { err = joinErr(err, operator.Stop(20*time.Second)) }()
	code = m.Run()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "operator log:\n%s\n", operator.ReadLog())
	}
	return code, nil
}

func joinErr(err, more error) error {
	if err == nil {
		return more
	}
	return err
}
