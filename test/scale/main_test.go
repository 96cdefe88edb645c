package scale

import (
	"testing"

	"github.com/apf-operator/apf-operator/test/harness"
)

// TestMain runs the suite quietly: the operator's logs at this volume would drown the figures.
// Each test starts its own control plane (startEnvironment); the binary, when a test runs the
// operator as a process, comes from harness.OperatorBinary.
func TestMain(m *testing.M) { harness.Main(m, &harness.Suite{Name: "scale"}) }
