// Package troubleshooting_test proves docs/troubleshooting.md against a real control plane: it
// extracts every command of the page's fenced sh blocks and runs it, as written, with the real
// kubectl and apf-operator binaries against envtest's kube-apiserver 1.36.3, with the operator
// running as a process (native enforcement) and a user "alice" whose requests one of our
// FlowSchemas classifies. Each command's output is checked for what the page says it shows,
// and every metric name the page uses must be served: kube-apiserver's on its /metrics, the
// operator's on its metrics endpoint.
package troubleshooting_test

import (
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/apf-operator/apf-operator/test/harness"
)

var suite = &harness.Suite{
	Name:            "troubleshooting",
	ControlPlane:    &harness.ControlPlane{},
	BeforeOperator:  setUpUsers,
	RunOperator:     true,
	OperatorMetrics: true,
	// The page covers EventRateLimit too (its metrics, its webhook): on, as a user who uses it has it.
	OperatorArgs: []string{"--enforcement=native", "--enable-event-rate-limit=true"},
}

var (
	// binDir holds kubectl and apf-operator, put first on the commands' PATH.
	binDir string
	// aliceKubeconfig is the kubeconfig of user alice (group team-a), who is not exempt.
	aliceKubeconfig string
)

func TestMain(m *testing.M) { harness.Main(m, suite) }

// setUpUsers puts kubectl and apf-operator in binDir and provisions alice.
func setUpUsers(s *harness.Suite) (err error) {
	binDir = filepath.Join(s.Dir, "bin")
	if err := os.Mkdir(binDir, 0o755); err != nil {
		return err
	}
	for name, target := range map[string]string{"kubectl": s.Cluster.Kubectl, "apf-operator": s.Binary} {
		if err := os.Symlink(target, filepath.Join(binDir, name)); err != nil {
			return err
		}
	}
	aliceKubeconfig, err = addUser(s.Cluster, s.Dir, envtest.User{Name: "alice", Groups: []string{"team-a"}})
	return err
}

// addUser provisions a user authenticated by a client certificate and writes its kubeconfig.
func addUser(cluster *harness.Cluster, dir string, user envtest.User) (string, error) {
	u, err := cluster.Env.AddUser(user, nil)
	if err != nil {
		return "", err
	}
	data, err := u.KubeConfig()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, user.Name+".kubeconfig")
	return path, os.WriteFile(path, data, 0o600)
}
