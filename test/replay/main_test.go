package replay_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apf-operator/apf-operator/test/harness"
)

// suite is kube-apiserver writing an audit log (auditPolicy) to logPath, and the operator with
// its defaults.
var suite = &harness.Suite{
	Name:               "replay",
	ControlPlane:       &harness.ControlPlane{Flags: map[string]string{}},
	BeforeControlPlane: writeAuditPolicy,
	RunOperator:        true,
	OperatorStopGrace:  10 * time.Second,
}

// logPath is kube-apiserver's audit log.
var logPath string

func TestMain(m *testing.M) { harness.Main(m, suite) }

// writeAuditPolicy writes the audit policy and points kube-apiserver at it and at logPath.
func writeAuditPolicy(s *harness.Suite) error {
	policy := filepath.Join(s.Dir, "audit-policy.yaml")
	logPath = filepath.Join(s.Dir, "audit.log")
	s.ControlPlane.Flags["audit-policy-file"] = policy
	s.ControlPlane.Flags["audit-log-path"] = logPath
	return os.WriteFile(policy, []byte(auditPolicy), 0o600)
}
