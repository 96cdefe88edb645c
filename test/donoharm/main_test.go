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
	"strings"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/apf-operator/apf-operator/test/harness"
)

// kube-apiserver's server concurrency limit is the sum of these two flags.
const (
	maxRequestsInflight         = 40
	maxMutatingRequestsInflight = 20
)

var (
	testEnv    *envtest.Environment
	restConfig *rest.Config
	// k8s reads and writes as the envtest admin (system:masters), directly.
	k8s client.Client
	// admin sends raw requests with the admin's credentials (and impersonation headers).
	admin   *rest.Config
	baseURL string
)

func TestMain(m *testing.M) {
	harness.Main(m, &harness.Suite{
		Name:         "donoharm",
		ControlPlane: &harness.ControlPlane{NoWebhooks: true, Flags: harness.InflightLimits(maxRequestsInflight, maxMutatingRequestsInflight)},
		Ready: func(s *harness.Suite) error {
			testEnv, restConfig, k8s, admin = s.Cluster.Env, s.Cluster.Config, s.Client, s.Cluster.Config
			baseURL = strings.TrimSuffix(restConfig.Host, "/")
			return nil
		},
	})
}
