// Package e2e runs the user's journey end to end: the real apf-operator binary as its own
// process against a real kube-apiserver (envtest), webhooks served over TLS and registered by
// URL, kubectl and helm built by hack/. It needs no cluster and no Docker engine.
package e2e

import (
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apf-operator/apf-operator/test/harness"
)

var suite = &harness.Suite{
	Name:            "e2e",
	ControlPlane:    &harness.ControlPlane{},
	RunOperator:     true,
	OperatorMetrics: true,
	Ready: func(s *harness.Suite) error {
		cluster, k8s, operator, binary, metricsAddr = s.Cluster, s.Client, s.Operator, s.Binary, s.MetricsAddr
		return nil
	},
}

var (
	cluster  *harness.Cluster
	k8s      client.Client
	operator *harness.Operator
	binary   string
	// metricsAddr is where the operator serves metrics in these tests: a free port, chosen once.
	metricsAddr string
)

func TestMain(m *testing.M) { harness.Main(m, suite) }

// startOperator starts the operator again with the suite's flags, after a test stopped it.
func startOperator() (*harness.Operator, error) {
	return restartOperator(cluster.OperatorArgs(metricsAddr)...)
}

// restartOperator starts the operator with args and hands it to the suite, which stops it and
// shows its log when a test fails.
func restartOperator(args ...string) (*harness.Operator, error) {
	op, err := cluster.StartOperator(binary, args...)
	if err == nil {
		suite.Operator = op
	}
	return op, err
}
