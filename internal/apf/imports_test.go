package apf

import (
	"testing"

	"github.com/apf-operator/apf-operator/internal/apitest"
)

// TestEngineIsFreeOfControllerRuntime keeps the engine embeddable in any API server: no package
// of internal/apf may depend on controller-runtime, directly or through its imports.
func TestEngineIsFreeOfControllerRuntime(t *testing.T) {
	apitest.AssertFreeOf(t, "./...", "sigs.k8s.io/controller-runtime")
}
