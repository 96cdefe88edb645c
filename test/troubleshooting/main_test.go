// Package troubleshooting_test proves docs/troubleshooting.md against a real control plane: it
// extracts every command of the page's fenced sh blocks and runs it, as written, with the real
// kubectl and apf-operator binaries against envtest's kube-apiserver 1.36.3, with the operator
// running as a process (native enforcement) and a user "alice" whose requests one of our
// FlowSchemas classifies. Each command's output is checked for what the page says it shows,
// and every metric name the page uses must be served: kube-apiserver's on its /metrics, the
// operator's on its metrics endpoint.
package troubleshooting_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/apf-operator/apf-operator/test/harness"
)

var (
	cluster  *harness.Cluster
	operator *harness.Operator
	// metricsAddr is where the operator serves its metrics (HTTPS, Kubernetes authorization).
	metricsAddr string
	// binDir holds kubectl and apf-operator, put first on the commands' PATH.
	binDir string
	// aliceKubeconfig is the kubeconfig of user alice (group team-a), who is not exempt.
	aliceKubeconfig string
)

func TestMain(m *testing.M) {
	log.SetLogger(logr.Discard()) // envtest's own logs; the operator logs to its file
	code, err := runSuite(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "troubleshooting suite:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

func runSuite(m *testing.M) (code int, err error) {
	dir, err := os.MkdirTemp("", "apf-troubleshooting-")
	if err != nil {
		return 1, err
	}
	defer os.RemoveAll(dir)
	binDir = filepath.Join(dir, "bin")
	binary, err := harness.BuildOperator(binDir)
	if err != nil {
		return 1, err
	}
	if cluster, err = harness.Start(); err != nil {
		return 1, err
	}
	defer func() { err = joinErr(err, cluster.Stop()) }()
	if err := os.Symlink(cluster.Kubectl, filepath.Join(binDir, "kubectl")); err != nil {
		return 1, err
	}
	if aliceKubeconfig, err = addUser(dir, envtest.User{Name: "alice", Groups: []string{"team-a"}}); err != nil {
		return 1, err
	}
	if metricsAddr, err = harness.FreeAddr(); err != nil {
		return 1, err
	}
	if operator, err = cluster.StartOperator(binary, append(cluster.OperatorArgs(metricsAddr), "--enforcement=native",
		// The page covers EventRateLimit too (its metrics, its webhook): on, as a user who uses it has it.
		"--enable-event-rate-limit=true")...); err != nil {
		return 1, err
	}
	defer func() { err = joinErr(err, operator.Stop(20*time.Second)) }()
	code = m.Run()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "operator log:\n%s\n", operator.ReadLog())
	}
	return code, nil
}

// addUser provisions a user authenticated by a client certificate and writes its kubeconfig.
func addUser(dir string, user envtest.User) (string, error) {
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

func joinErr(err, more error) error {
	if err == nil {
		return more
	}
	return err
}
