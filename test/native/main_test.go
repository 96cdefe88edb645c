// Package native_test proves, against a real kube-apiserver, that enforcement "native" works:
// the operator's configuration, projected onto flowcontrol.apiserver.k8s.io/v1 objects, is what
// kube-apiserver enforces. Requests are sent as impersonated users through the envtest admin
// (a system:masters member, which native APF always exempts), and read back through the
// X-Kubernetes-PF-FlowSchema-UID and X-Kubernetes-PF-PriorityLevel-UID response headers.
//
// The package runs its own control plane (a kube-apiserver with a lowered concurrency limit,
// see TestMain) and, per test, one in-process operator with enforcement native.
package native_test

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/apf-operator/apf-operator/test/harness"
)

// kube-apiserver's server concurrency limit is the sum of these two flags. Native APF gives a
// level ceil(limit × shares / sum of all levels' shares) seats; kube-apiserver's own suggested
// levels alone hold 245 shares, so with 150 a level of 1 share gets exactly one seat (the
// overload test relies on it) and every other level keeps several.
const (
	maxRequestsInflight         = 100
	maxMutatingRequestsInflight = 50
)

var (
	testEnv    *envtest.Environment
	restConfig *rest.Config
	// k8s reads and writes as the admin, directly through the API server (no cache). The
	// admin is exempt, so its requests are never rejected with 429.
	k8s client.WithWatch
	// admin is a raw HTTP client with the admin's credentials: requests built by hand (with
	// impersonation headers) are sent once and their status is seen as is, never retried.
	admin *http.Client
	// ownConnection is the admin's raw HTTP client on connections of its own: requests sent
	// through it do not share a connection (and its flow control) with those sent through
	// admin.
	ownConnection *http.Client
	// baseURL is kube-apiserver's URL without a trailing slash.
	baseURL string
)

func TestMain(m *testing.M) {
	harness.Main(m, &harness.Suite{
		Name:         "native",
		ControlPlane: &harness.ControlPlane{NoWebhooks: true, Flags: harness.InflightLimits(maxRequestsInflight, maxMutatingRequestsInflight)},
		Logger:       testLogger(),
		Ready:        adminClients,
	})
}

// adminClients makes the admin's clients of the suite's control plane.
func adminClients(s *harness.Suite) (err error) {
	testEnv, restConfig, k8s = s.Cluster.Env, s.Cluster.Config, s.Client
	if admin, err = rest.HTTPClientFor(restConfig); err != nil {
		return err
	}
	separate := rest.CopyConfig(restConfig)
	separate.Dial = (&net.Dialer{}).DialContext // a transport of its own, not client-go's shared one
	if ownConnection, err = rest.HTTPClientFor(separate); err != nil {
		return err
	}
	baseURL = strings.TrimSuffix(restConfig.Host, "/")
	return nil
}

// testLogger keeps the operator's logs quiet unless APF_TEST_VERBOSE is set.
func testLogger() logr.Logger {
	if os.Getenv("APF_TEST_VERBOSE") == "" {
		return logr.Discard()
	}
	return funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{Verbosity: 1})
}
