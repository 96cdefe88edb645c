package top_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"

	"github.com/apf-operator/apf-operator/internal/cli/recommend"
	"github.com/apf-operator/apf-operator/test/harness"
)

// The flooded tenant: user bob on level "hot" (2 shares, one queue of 5 requests, no
// borrowing), listing large ConfigMaps (the recipe of TestTopShowsTheFloodingTenantFirst);
// level "cool" (8 shares) gets no request. The window is recommend's shortest (the autopilot's
// MinWindow: the two reads are at least that far apart); the flood outlasts it by floodPast,
// for recommend's second read.
const (
	window    = 15 * time.Second
	floodPast = 3 * time.Second
)

// applyHotAndCool applies levels "hot" (with bob's FlowSchema) and "cool", and the tenant's
// namespace.
func applyHotAndCool(ctx context.Context, t *testing.T) {
	t.Helper()
	applyTenant(ctx, t, harness.JoinYAML(
		harness.RequestPriorityYAML("hot", "{priorityLevel: 7000, assuredConcurrencyShares: 2, queuesPerWidth: 1, queueLengthLimit: 5, borrowingLimitPercent: 0}"),
		harness.RequestPriorityYAML("cool", "{priorityLevel: 6000, assuredConcurrencyShares: 8, queuesPerWidth: 1, queueLengthLimit: 5}"),
		harness.UserFlowSchemaYAML("hot", "hot", 7000, "bob")),
		"requestpriorities.flowcontrol.apf-operator.io/hot", "requestpriorities.flowcontrol.apf-operator.io/cool",
		"flowschemas.flowcontrol.apf-operator.io/hot")
}

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
	applyHotAndCool(ctx, t)
	bob, url := bobClient(t)

	var out, errOut bytes.Buffer
	done := make(chan error, 1)
	go func() {
		cmd := recommend.NewCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
		cmd.SetArgs([]string{"--kubeconfig", suite.Cluster.Kubeconfig, "--window", window.String(), "-o", "yaml"})
		done <- cmd.ExecuteContext(ctx)
	}()
	got429 := flood(ctx, bob, url, window+floodPast)
	if err := <-done; err != nil {
		t.Fatalf("recommend: %v\n%s", err, errOut.String())
	}
	t.Logf("bob saw %d responses 429\nrecommend -o yaml:\n%s\nstderr:\n%s", got429, out.String(), errOut.String())
	if got429 == 0 {
		t.Fatalf("no request of bob was rejected in %s of flooding", window)
	}
	if !strings.Contains(errOut.String(), "reading demand for "+window.String()+" (--window)...") {
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
