// Package recommend_test proves `apf-operator recommend` against a real kube-apiserver 1.36.3
// (envtest) with the operator running as a process (enforcement native): one of two operator
// levels is flooded while the other idles, and recommend, reading kube-apiserver live over the
// flood, must move shares from the idle level to the flooded one, keeping their total.
package recommend_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/apf-operator/apf-operator/test/harness"
)

// kube-apiserver's server concurrency limit is the sum of these two flags: with 150 and the
// suggested levels' 245 shares, the flooded level of 2 shares gets 2 seats.
const (
	maxRequestsInflight         = 100
	maxMutatingRequestsInflight = 50
)

var (
	cluster  *harness.Cluster
	operator *harness.Operator
)

func TestMain(m *testing.M) {
	log.SetLogger(logr.Discard())
	code, err := runSuite(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "recommend suite:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

func runSuite(m *testing.M) (code int, err error) {
	dir, err := os.MkdirTemp("", "apf-recommend-")
	if err != nil {
		return 1, err
	}
	defer os.RemoveAll(dir)
	binary, err := harness.BuildOperator(filepath.Join(dir, "bin"))
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
	if operator, err = cluster.StartOperator(binary, append(cluster.OperatorArgs("0"), "--enforcement=native",
		// The two test levels hold 10 shares: past the default 10% budget at 150 seats.
		"--native-max-seat-loss-percent=50")...); err != nil {
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
