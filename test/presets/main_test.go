package presets_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apf-operator/apf-operator/test/harness"
)

// The live suite: one control plane and the operator binary (enforcement native, its defaults)
// for every live test, started on first use so that the offline tests need neither.
var suite = &harness.Suite{
	Name:              "presets",
	ControlPlane:      &harness.ControlPlane{},
	RunOperator:       true,
	OperatorStopGrace: 10 * time.Second,
	Lazy:              true,
	Ready: func(s *harness.Suite) (err error) {
		live.cluster, live.operator, live.binary, live.k8s = s.Cluster, s.Operator, s.Binary, s.Client
		live.admin, err = rest.HTTPClientFor(s.Cluster.Config)
		return err
	},
}

// live is what the suite started, for the live tests.
var live struct {
	cluster  *harness.Cluster
	operator *harness.Operator
	binary   string // the apf-operator binary the operator runs from
	k8s      client.Client
	admin    *http.Client
}

func TestMain(m *testing.M) { harness.Main(m, suite) }

// startLive starts the control plane and the operator once; a failure fails every live test.
// A live test that fails shows the operator's log tail.
func startLive(t *testing.T) {
	t.Helper()
	suite.Start(t)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("operator log (tail):\n%s", logTail())
		}
	})
}

func logTail() string {
	lines := strings.Split(live.operator.ReadLog(), "\n")
	if len(lines) > 30 {
		lines = lines[len(lines)-30:]
	}
	return strings.Join(lines, "\n")
}

// send sends one request as user (impersonated: a service account user gets its
// service-account groups) and returns the status and the two classification headers.
func send(ctx context.Context, user, method, path string) (status int, fsUID, plUID string, err error) {
	var body *strings.Reader
	if method == http.MethodPost {
		body = strings.NewReader(`{}`)
	} else {
		body = strings.NewReader("")
	}
	req, err := http.NewRequestWithContext(ctx, method, live.cluster.Config.Host+path, body)
	if err != nil {
		return 0, "", "", err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Impersonate-User", user)
	resp, err := live.admin.Do(req)
	if err != nil {
		return 0, "", "", fmt.Errorf("%s %s as %s: %w", method, path, user, err)
	}
	defer func() { _ = resp.Body.Close() }()
	return resp.StatusCode, resp.Header.Get("X-Kubernetes-PF-FlowSchema-UID"),
		resp.Header.Get("X-Kubernetes-PF-PriorityLevel-UID"), nil
}
