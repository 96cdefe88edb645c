// Package budget_test measures, on a real kube-apiserver, what the native budget's borrowing
// rule does while a tenant's projected level floods: kube-apiserver's current seats
// (apiserver_flowcontrol_current_limit_seats) of workload-low and global-default, busy
// meanwhile, and of the tenant's level, first with a level that borrows without limit (what the
// projection wrote before the rule: no borrowingLimitPercent), then with the level the
// operator projects now (the default borrowing limit). The figures it logs are those of
// docs/enforcement.md ("Borrowing").
//
// The package runs its own control plane with a concurrency limit of 60 seats
// (harness.BudgetSuite: --max-requests-inflight=40, --max-mutating-requests-inflight=20) and the
// operator binary.
package budget_test

import (
	"testing"

	"github.com/apf-operator/apf-operator/test/harness"
)

// suite is the package's control plane and operator; tests use its Client and Cluster.Config.
var suite = harness.BudgetSuite("budget")

func TestMain(m *testing.M) { harness.Main(m, suite) }
