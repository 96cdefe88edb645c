package eventratelimit

import (
	"testing"

	"github.com/apf-operator/apf-operator/internal/apitest"
)

// TestEngineIsFreeOfControllerRuntime keeps the engine a plain library: it must not depend on
// controller-runtime, directly or through its imports (the webhook and the reconciler adapt it).
func TestEngineIsFreeOfControllerRuntime(t *testing.T) {
	apitest.AssertFreeOf(t, ".", "sigs.k8s.io/controller-runtime")
}
