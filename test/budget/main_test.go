// Package budget_test measures, on a real kube-apiserver, what the native budget's borrowing
// rule does while a tenant's projected level floods: kube-apiserver's current seats
// (apiserver_flowcontrol_current_limit_seats) of workload-low and global-default, busy
// meanwhile, and of the tenant's level, first with a level that borrows without limit (what the
// projection wrote before the rule: no borrowingLimitPercent), then with the level the
// operator projects now (the default borrowing limit). The figures it logs are those of
// docs/enforcement.md ("Borrowing").
//
// The package runs its own control plane with a concurrency limit of 60 seats
// (--max-requests-inflight=40, --max-mutating-requests-inflight=20) and the operator binary.
package budget_test

import (
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apf-operator/apf-operator/test/harness"
)

// kube-apiserver's server concurrency limit is the sum of these two flags.
const (
	maxRequestsInflight         = 40
	maxMutatingRequestsInflight = 20
)

var (
	restConfig *rest.Config
	k8s        client.Client
)

func TestMain(m *testing.M) {
	harness.Main(m, &harness.Suite{
		Name:         "budget",
		ControlPlane: &harness.ControlPlane{Flags: harness.InflightLimits(maxRequestsInflight, maxMutatingRequestsInflight)},
		RunOperator:  true,
		OperatorArgs: []string{"--enforcement=native", "--manage-defaults=false"},
		Ready: func(s *harness.Suite) error {
			restConfig, k8s = s.Cluster.Config, s.Client
			return nil
		},
	})
}
