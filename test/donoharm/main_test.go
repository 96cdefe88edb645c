// Package donoharm_test measures, on a real kube-apiserver, what installing the operator with
// the chart's settings (enforcement native, defaults managed, --native-unmatched=kube-apiserver)
// does to each traffic class that kube-apiserver's suggested configuration serves: the
// priority level that classifies the class's requests (X-Kubernetes-PF-PriorityLevel-UID) and
// that level's nominal seats (apiserver_flowcontrol_nominal_limit_seats), before the operator,
// after install, and after uninstall (the operator stopped, then `apf-operator prune-native`).
// It fails when a class keeps less than 90% of its seats after install, or when anything
// differs from before after uninstall. The table it logs is the one in docs/enforcement.md.
//
// The package runs its own control plane with the concurrency limits of the cluster
// (--max-requests-inflight=40, --max-mutating-requests-inflight=20: 60 seats).
package donoharm_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
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

// kube-apiserver's server concurrency limit is the sum of these two flags.
const (
	maxRequestsInflight         = 40
	maxMutatingRequestsInflight = 20
)

var (
	testEnv    *envtest.Environment
	restConfig *rest.Config
	testScheme = runtime.NewScheme()
	// k8s reads and writes as the envtest admin (system:masters), directly.
	k8s client.Client
	// admin sends raw requests with the admin's credentials (and impersonation headers).
	admin   *rest.Config
	baseURL string
)

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	log.SetLogger(logr.Discard())
	if err := clientgoscheme.AddToScheme(testScheme); err != nil {
		return fail(err)
	}
	if err := flowv1.AddToScheme(testScheme); err != nil {
		return fail(err)
	}
	var err error
	if testEnv, err = envtestutil.NewEnvironment(); err != nil {
		return fail(err)
	}
	testEnv.ControlPlane.GetAPIServer().Configure().
		Set("max-requests-inflight", strconv.Itoa(maxRequestsInflight)).
		Set("max-mutating-requests-inflight", strconv.Itoa(maxMutatingRequestsInflight))
	if restConfig, err = testEnv.Start(); err != nil {
		return fail(fmt.Errorf("starting envtest: %w", err))
	}
	defer func() { _ = testEnv.Stop() }()
	if k8s, err = client.New(restConfig, client.Options{Scheme: testScheme}); err != nil {
		return fail(err)
	}
	admin = restConfig
	baseURL = strings.TrimSuffix(restConfig.Host, "/")
	return m.Run()
}

func fail(err error) int {
	fmt.Fprintln(os.Stderr, "donoharm suite:", err)
	return 1
}
