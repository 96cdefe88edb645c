package harness

// The budget suites' control plane: a server concurrency limit of BudgetSuiteSeats
// (--max-requests-inflight 40 plus --max-mutating-requests-inflight 20), small enough that a
// few tenants' levels fill the native budget.
const (
	budgetSuiteReadOnly = 40
	budgetSuiteMutating = 20
	// BudgetSuiteSeats is kube-apiserver's server concurrency limit in a BudgetSuite.
	BudgetSuiteSeats = budgetSuiteReadOnly + budgetSuiteMutating
)

// BudgetSuite is the suite of test/budget and test/budgetorder: a control plane of
// BudgetSuiteSeats seats and the operator binary enforcing natively without managing
// defaults, so that only the tests' own objects share the budget.
func BudgetSuite(name string) *Suite {
	return &Suite{
		Name:         name,
		ControlPlane: &ControlPlane{Flags: InflightLimits(budgetSuiteReadOnly, budgetSuiteMutating)},
		RunOperator:  true,
		OperatorArgs: []string{"--enforcement=native", "--manage-defaults=false"},
	}
}
