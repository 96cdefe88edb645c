// Package budgetorder_test proves, on a real kube-apiserver with the operator binary and its
// webhooks, that the native budget's decisions are deterministic and stable: twelve
// RequestPriorities created at once by separate clients, more than the budget holds, end with
// the earliest created projected and the others OverBudget, and nothing changes for five
// minutes (no level flips, no native level is deleted and re-created), while kube-apiserver's
// own levels keep 90% or more of their nominal seats.
//
// The package runs its own control plane with a concurrency limit of 60 seats, where the
// budget (at the default 10%) is 12 shares: six of the twelve 2-share levels fit.
package budgetorder_test

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
		Name:         "budgetorder",
		ControlPlane: &harness.ControlPlane{Flags: harness.InflightLimits(maxRequestsInflight, maxMutatingRequestsInflight)},
		RunOperator:  true,
		OperatorArgs: []string{"--enforcement=native", "--manage-defaults=false"},
		Ready: func(s *harness.Suite) error {
			restConfig, k8s = s.Cluster.Config, s.Client
			return nil
		},
	})
}
