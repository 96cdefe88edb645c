package harness

import (
	"context"
	"testing"
	"time"
)

// pollInterval is how often Eventually checks its condition.
const pollInterval = 100 * time.Millisecond

// Condition is what Eventually polls: a check that returns nil once it holds, the same given a
// context that ends at the timeout, or a check that reports true once it holds (a non-nil
// error with false is kept as the reason it does not hold yet).
type Condition interface {
	func() error | func(context.Context) error | func(context.Context) (bool, error)
}

// Eventually polls cond every 100 ms until it holds, and fails the test (t.Fatalf) when the
// timeout passes first, naming what it waited for and the condition's last error.
func Eventually[C Condition](t testing.TB, timeout time.Duration, what string, cond C) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	check := asCheck(cond)
	for {
		err := check(ctx)
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("timed out after %s waiting for %s: %v", timeout, what, err)
			return // a fake TB's Fatalf returns
		case <-time.After(pollInterval):
		}
	}
}

// errNotYet is the reason a boolean condition that returned false without an error gives.
type errNotYet struct{}

func (errNotYet) Error() string { return "condition not met" }

// asCheck turns any Condition into one shape: nil when it holds.
func asCheck[C Condition](cond C) func(context.Context) error {
	switch f := any(cond).(type) {
	case func() error:
		return func(context.Context) error { return f() }
	case func(context.Context) error:
		return f
	case func(context.Context) (bool, error):
		return func(ctx context.Context) error {
			ok, err := f(ctx)
			switch {
			case ok && err == nil:
				return nil
			case err != nil:
				return err
			default:
				return errNotYet{}
			}
		}
	}
	panic("harness.Eventually: unreachable condition type")
}
