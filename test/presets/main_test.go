package presets_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/apf-operator/apf-operator/test/harness"
)

// The live suite: one control plane and the operator binary (enforcement native, its defaults)
// for every live test, started on first use so that the offline tests need neither.
var live struct {
	cluster  *harness.Cluster
	operator *harness.Operator
	binary   string // the apf-operator binary the operator runs from
	k8s      client.Client
	admin    *http.Client
	err      error
	started  bool
}

func TestMain(m *testing.M) {
	log.SetLogger(logr.Discard())
	code := m.Run()
	if live.operator != nil {
		_ = live.operator.Stop(10 * time.Second)
	}
	if live.cluster != nil {
		_ = live.cluster.Stop()
	}
	os.Exit(code)
}

// startLive starts the control plane and the operator once; a failure fails every live test.
func startLive(t *testing.T) {
	t.Helper()
	if !live.started {
		live.started = true
		live.err = startCluster()
	}
	if live.err != nil {
		t.Fatal(live.err)
	}
}

func startCluster() error {
	c, err := harness.Start()
	if err != nil {
		return err
	}
	live.cluster = c
	if live.binary, err = harness.BuildOperator(c.Dir); err != nil {
		return err
	}
	if live.operator, err = c.StartOperator(live.binary, c.OperatorArgs("0")...); err != nil {
		return err
	}
	if live.k8s, err = c.Client(); err != nil {
		return err
	}
	live.admin, err = rest.HTTPClientFor(c.Config)
	return err
}

// eventually retries check every 250 ms until it succeeds or the timeout passes, then fails
// with its last error and the operator's log tail.
func eventually(t *testing.T, timeout time.Duration, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %v\noperator log (tail):\n%s", timeout, err, logTail())
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func logTail() string {
	if live.operator == nil {
		return ""
	}
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
