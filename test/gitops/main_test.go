// Package gitops_test proves what GitOps tools make of the operator's objects: the Argo CD
// health script deploy/argocd/health.lua, run by gopher-lua as Argo CD runs it, and Flux's
// kstatus (sigs.k8s.io/cli-utils status.Compute), both over objects read from a real
// kube-apiserver (envtest) whose status an in-process operator wrote; the argocd-cm snippet
// generated from the script; and the fleet examples under examples/fleet.
package gitops_test

import (
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/apf-operator/apf-operator/test/harness"
)

// The envtest control plane is started lazily by the first test that needs it, so that the
// tests that read files only (snippet, fleet examples) run without one.
var suite = &harness.Suite{
	Name:         "gitops",
	ControlPlane: &harness.ControlPlane{NoWebhooks: true},
	Lazy:         true,
	Ready: func(s *harness.Suite) error {
		testEnv, restConfig, k8s = s.Cluster.Env, s.Cluster.Config, s.Client
		return nil
	},
}

var (
	testEnv    *envtest.Environment
	restConfig *rest.Config
	// k8s reads and writes directly through the API server, as Argo CD and Flux do: no cache.
	k8s client.Client
)

func TestMain(m *testing.M) { harness.Main(m, suite) }

// controlPlane starts kube-apiserver and etcd with the project's CRDs on first use.
func controlPlane(t *testing.T) {
	t.Helper()
	suite.Start(t)
}
