// Package top_test proves `apf-operator top` against a real kube-apiserver 1.36.3 (envtest)
// with the operator running as a process (enforcement native): a tenant on a tiny level is
// flooded until kube-apiserver rejects its requests, and top must show that tenant first, with
// as many rejections as kube-apiserver's apiserver_flowcontrol_rejected_requests_total counted
// over the same window (within 5%).
package top_test

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

// kube-apiserver's server concurrency limit is the sum of these two flags: with 150, a level
// of one share gets one seat (kube-apiserver's suggested levels alone hold 245 shares).
const (
	maxRequestsInflight         = 100
	maxMutatingRequestsInflight = 50
)

var (
	cluster  *harness.Cluster
	operator *harness.Operator
	// binary is the apf-operator binary; binDir holds it as kubectl-apf and kubectl.
	binary, binDir string
)

func TestMain(m *testing.M) {
	log.SetLogger(logr.Discard())
	code, err := runSuite(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "top suite:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

func runSuite(m *testing.M) (code int, err error) {
	dir, err := os.MkdirTemp("", "apf-top-")
	if err != nil {
		return 1, err
	}
	defer os.RemoveAll(dir)
	binDir = filepath.Join(dir, "bin")
	if binary, err = harness.BuildOperator(binDir); err != nil {
		return 1, err
	}
	if err := os.Symlink(binary, filepath.Join(binDir, "kubectl-apf")); err != nil {
		return 1, err
	}
	if cluster, err = harness.StartWith(map[string]string{
		"max-requests-inflight":          strconv.Itoa(maxRequestsInflight),
		"max-mutating-requests-inflight": strconv.Itoa(maxMutatingRequestsInflight),
	}); err != nil {
		return 1, err
	}
	defer func() { err = joinErr(err, cluster.Stop()) }()
	if err := os.Symlink(cluster.Kubectl, filepath.Join(binDir, "kubectl")); err != nil {
		return 1, err
	}
	if operator, err = cluster.StartOperator(binary, append(cluster.OperatorArgs("0"), "--enforcement=native")...); err != nil {
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
