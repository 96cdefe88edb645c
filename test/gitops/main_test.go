// Package gitops_test proves what GitOps tools make of the operator's objects: the Argo CD
// health script deploy/argocd/health.lua, run by gopher-lua as Argo CD runs it, and Flux's
// kstatus (sigs.k8s.io/cli-utils status.Compute), both over objects read from a real
// kube-apiserver (envtest) whose status an in-process operator wrote; the argocd-cm snippet
// generated from the script; and the fleet examples under examples/fleet.
package gitops_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/test/envtestutil"
)

// The envtest control plane is started lazily by the first test that needs it, so that the
// tests that read files only (snippet, fleet examples) run without one.
var (
	testEnv    *envtest.Environment
	restConfig *rest.Config
	testScheme = runtime.NewScheme()
	// k8s reads and writes directly through the API server, as Argo CD and Flux do: no cache.
	k8s client.Client
)

func TestMain(m *testing.M) {
	log.SetLogger(logr.Discard())
	code := m.Run()
	if testEnv != nil {
		if err := testEnv.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping envtest:", err)
		}
	}
	os.Exit(code)
}

// controlPlane starts kube-apiserver and etcd with the project's CRDs on first use.
func controlPlane(t *testing.T) {
	t.Helper()
	if testEnv != nil {
		return
	}
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, flowv1.AddToScheme} {
		if err := add(testScheme); err != nil {
			t.Fatal(err)
		}
	}
	env, err := envtestutil.NewEnvironment()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting envtest: %v", err)
	}
	testEnv, restConfig = env, cfg
	if k8s, err = client.New(restConfig, client.Options{Scheme: testScheme}); err != nil {
		t.Fatal(err)
	}
}
