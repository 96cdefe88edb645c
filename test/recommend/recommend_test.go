package recommend_test

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"

	"github.com/apf-operator/apf-operator/internal/cli/recommend"
	"github.com/apf-operator/apf-operator/test/harness"
)

// The flooded tenant: user bob on level "hot" (2 shares, one queue of 5 requests, no
// borrowing), listing large ConfigMaps from floodWorkers goroutines (the recipe of test/top);
// level "cool" (8 shares) gets no request.
const (
	tenantConfigMaps = 30
	tenantBlob       = 64 << 10
	floodWorkers     = 40
	window           = 20 * time.Second
)

const tenantManifests = `apiVersion: flowcontrol.apf-operator.io/v1alpha1
kind: RequestPriority
metadata: {name: hot}
spec: {priorityLevel: 7000, assuredConcurrencyShares: 2, queuesPerWidth: 1, queueLengthLimit: 5, borrowingLimitPercent: 0}
---
apiVersion: flowcontrol.apf-operator.io/v1alpha1
kind: RequestPriority
metadata: {name: cool}
spec: {priorityLevel: 6000, assuredConcurrencyShares: 8, queuesPerWidth: 1, queueLengthLimit: 5}
---
apiVersion: flowcontrol.apf-operator.io/v1alpha1
kind: FlowSchema
metadata: {name: hot}
spec:
  matchingPriority: 7000
  requestPriority: {name: hot}
  match:
  - and:
    - equals: {field: user, value: bob}
---
apiVersion: v1
kind: Namespace
metadata: {name: tenant}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: list-configmaps, namespace: tenant}
rules: [{apiGroups: [""], resources: [configmaps], verbs: [list]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: list-configmaps, namespace: tenant}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: list-configmaps}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: bob}]
`

// patchDoc is one document of recommend -o yaml.
type patchDoc struct {
	Metadata struct{ Name string }
	Spec     struct {
		AssuredConcurrencyShares *int32 `json:"assuredConcurrencyShares"`
	}
}

func TestRecommendMovesSharesToTheFloodedLevel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	applyTenant(ctx, t)
	bob, url := bobClient(t)

	var out, errOut bytes.Buffer
	done := make(chan error, 1)
	go func() {
		cmd := recommend.NewCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
		cmd.SetArgs([]string{"--kubeconfig", cluster.Kubeconfig, "--window", window.String(), "-o", "yaml"})
		done <- cmd.ExecuteContext(ctx)
	}()
	got429 := flood(ctx, bob, url, window+5*time.Second)
	if err := <-done; err != nil {
		t.Fatalf("recommend: %v\n%s", err, errOut.String())
	}
	t.Logf("bob saw %d responses 429\nrecommend -o yaml:\n%s\nstderr:\n%s", got429, out.String(), errOut.String())
	if got429 == 0 {
		t.Fatalf("no request of bob was rejected in %s of flooding", window)
	}
	if !strings.Contains(errOut.String(), "reading demand for 20s (--window)...") {
		t.Errorf("no progress line on standard error")
	}
	shares := map[string]int32{}
	for _, doc := range strings.Split(out.String(), "\n---\n") {
		var p patchDoc
		if err := yaml.Unmarshal([]byte(doc), &p); err != nil {
			t.Fatalf("%v in\n%s", err, doc)
		}
		if p.Spec.AssuredConcurrencyShares != nil {
			shares[p.Metadata.Name] = *p.Spec.AssuredConcurrencyShares
		}
	}
	if shares["hot"] <= 2 || shares["cool"] >= 8 || shares["hot"]+shares["cool"] != 10 {
		t.Errorf("recommended shares %v: want hot above 2, cool below 8, 10 in all", shares)
	}
}

// applyTenant applies the tenant's configuration and waits until it is projected.
func applyTenant(ctx context.Context, t *testing.T) {
	t.Helper()
	var b strings.Builder
	b.WriteString(tenantManifests)
	blob := strings.Repeat("x", tenantBlob)
	for i := range tenantConfigMaps {
		b.WriteString("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: blob-" + strconv.Itoa(i) +
			", namespace: tenant}\ndata: {blob: " + blob + "}\n")
	}
	if _, stderr, err := cluster.KubectlRun(ctx, strings.NewReader(b.String()), "apply", "-f", "-"); err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, stderr)
	}
	if _, stderr, err := cluster.KubectlRun(ctx, nil, "wait", "--for=condition=Projected", "--timeout=90s",
		"requestpriorities.flowcontrol.apf-operator.io/hot", "requestpriorities.flowcontrol.apf-operator.io/cool",
		"flowschemas.flowcontrol.apf-operator.io/hot"); err != nil {
		status, _, _ := cluster.KubectlRun(ctx, nil, "get", "requestpriorities.flowcontrol.apf-operator.io", "-o", "yaml")
		t.Fatalf("kubectl wait: %v\n%s\n%s", err, stderr, status)
	}
}

// bobClient is an HTTP client authenticated as bob and the URL he floods.
func bobClient(t *testing.T) (*http.Client, string) {
	t.Helper()
	client, url, err := cluster.UserClient("bob", "tenant")
	if err != nil {
		t.Fatal(err)
	}
	return client, url
}

// flood lists url from floodWorkers goroutines for d (or until ctx ends) and returns the
// number of 429 responses.
func flood(ctx context.Context, client *http.Client, url string, d time.Duration) int64 {
	return harness.Flood(ctx, client, url, floodWorkers, d)
}
