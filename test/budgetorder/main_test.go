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

	"github.com/apf-operator/apf-operator/test/harness"
)

// suite is the package's control plane and operator; tests use its Client and Cluster.Config.
var suite = harness.BudgetSuite("budgetorder")

func TestMain(m *testing.M) { harness.Main(m, suite) }
