package troubleshooting_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Contention: user bob, on a projected level of one share (the fewest seats kube-apiserver
// gives), one queue of one request and no borrowing, lists large ConfigMaps from many
// goroutines until kube-apiserver rejects one of his requests.
const (
	contentionConfigMaps = 30
	contentionBlob       = 64 << 10
	contentionWorkers    = 40
	contentionLimit      = 30 * time.Second
)

// contentionManifests are the level, its FlowSchema and bob's right to list ConfigMaps.
const contentionManifests = `apiVersion: flowcontrol.apf-operator.io/v1alpha1
kind: RequestPriority
metadata: {name: tiny}
spec: {priorityLevel: 7000, assuredConcurrencyShares: 1, queuesPerWidth: 1, queueLengthLimit: 1, borrowingLimitPercent: 0}
---
apiVersion: flowcontrol.apf-operator.io/v1alpha1
kind: FlowSchema
metadata: {name: tiny}
spec:
  matchingPriority: 7000
  requestPriority: {name: tiny}
  match:
  - and:
    - equals: {field: user, value: bob}
---
apiVersion: v1
kind: Namespace
metadata: {name: contention}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: list-configmaps, namespace: contention}
rules: [{apiGroups: [""], resources: [configmaps], verbs: [list]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: list-configmaps, namespace: contention}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: list-configmaps}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: bob}]
`

// provokeRejection applies the contention level with kubectl, waits until it is projected and
// floods it as bob until a request is rejected with 429 (or contentionLimit passes).
func provokeRejection(t *testing.T, dir string) {
	t.Helper()
	var b strings.Builder
	b.WriteString(contentionManifests)
	blob := strings.Repeat("x", contentionBlob)
	for i := range contentionConfigMaps {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: blob-%02d, namespace: contention}\ndata: {blob: %s}\n", i, blob)
	}
	file := filepath.Join(dir, "contention.yaml")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, command := range []string{
		"kubectl apply -f " + file,
		"kubectl wait --for=condition=Projected --timeout=60s requestpriorities.flowcontrol.apf-operator.io/tiny flowschemas.flowcontrol.apf-operator.io/tiny",
	} {
		if r := runCommand(t, dir, cluster.Kubeconfig, command); r.code != 0 {
			t.Fatalf("%s: exit %d\n%s", command, r.code, r.stderr)
		}
	}
	bob, err := cluster.Env.AddUser(envtest.User{Name: "bob"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	client, err := rest.HTTPClientFor(bob.Config())
	if err != nil {
		t.Fatal(err)
	}
	url := strings.TrimSuffix(bob.Config().Host, "/") + "/api/v1/namespaces/contention/configmaps"
	if n := flood(client, url); n == 0 {
		t.Fatalf("no request of bob was rejected in %s of flooding", contentionLimit)
	}
}

// flood lists url from contentionWorkers goroutines until one response is 429 or
// contentionLimit passes, and returns the number of 429 responses.
func flood(client *http.Client, url string) int64 {
	ctx, cancel := context.WithTimeout(context.Background(), contentionLimit)
	defer cancel()
	var rejected atomic.Int64
	var wg sync.WaitGroup
	for range contentionWorkers {
		wg.Go(func() {
			for ctx.Err() == nil {
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
				if err != nil {
					return
				}
				resp, err := client.Do(req)
				if err != nil {
					continue
				}
				_ = resp.Body.Close()
				if resp.StatusCode == http.StatusTooManyRequests {
					rejected.Add(1)
					cancel()
				}
			}
		})
	}
	wg.Wait()
	return rejected.Load()
}
