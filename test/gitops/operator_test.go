package gitops_test

import (
	"testing"

	"github.com/apf-operator/apf-operator/internal/eventratelimit"
	"github.com/apf-operator/apf-operator/test/harness/inprocess"
)

// startOperator runs the operator in-process as production wires it (internal/operator), with
// no default objects, no webhook server and no leader election, with the given enforcement
// (controllers.EnforcementNative or EnforcementNone), until the returned function is called or
// the test ends. engine, when set, is the events webhook's engine the EventRateLimit objects
// configure; nil means the events webhook is off.
func startOperator(t *testing.T, enforcement string, engine *eventratelimit.Engine) (stop func()) {
	t.Helper()
	o := inprocess.Options()
	o.ManageDefaults = false
	o.Enforcement = enforcement
	// The suite's tests share one control plane and leave their levels behind: the share
	// budget (docs/enforcement.md) is not what they check, so it is wide.
	o.NativeMaxSeatLossPercent = 90
	o.Testing.EventRateLimitEngine = engine
	_, stop = inprocess.Start(t, restConfig, o)
	return stop
}
