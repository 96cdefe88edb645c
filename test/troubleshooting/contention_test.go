package troubleshooting_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apf-operator/apf-operator/test/harness"
)

// Contention: user bob, on a projected level of one share (the fewest seats kube-apiserver
// gives), one queue of one request and no borrowing, lists large ConfigMaps from many
// goroutines until kube-apiserver rejects one of his requests (the tenant of test/top).
const (
	contentionConfigMaps = 30
	contentionWorkers    = 40
	contentionLimit      = 30 * time.Second
)

// contentionManifests are the level, its FlowSchema and bob's namespace of ConfigMaps.
func contentionManifests() string {
	return harness.JoinYAML(
		harness.RequestPriorityYAML("tiny", "{priorityLevel: 7000, assuredConcurrencyShares: 1, queuesPerWidth: 1, queueLengthLimit: 1, borrowingLimitPercent: 0}"),
		harness.UserFlowSchemaYAML("tiny", "tiny", 7000, "bob"),
		harness.TenantNamespaceYAML("contention", "bob", contentionConfigMaps))
}

// provokeRejection applies the contention level with kubectl, waits until it is projected and
// floods it as bob until a request is rejected with 429 (or contentionLimit passes).
func provokeRejection(t *testing.T, dir string) {
	t.Helper()
	file := filepath.Join(dir, "contention.yaml")
	if err := os.WriteFile(file, []byte(contentionManifests()), 0o644); err != nil {
		t.Fatal(err)
	}
	runAsAdmin(t, dir,
		"kubectl apply -f "+file,
		"kubectl wait --for=condition=Projected --timeout=60s requestpriorities.flowcontrol.apf-operator.io/tiny flowschemas.flowcontrol.apf-operator.io/tiny",
	)
	client, url, err := suite.Cluster.UserClient("bob", "contention")
	if err != nil {
		t.Fatal(err)
	}
	if n := harness.FloodUntilRejected(context.Background(), client, url, contentionWorkers, contentionLimit); n == 0 {
		t.Fatalf("no request of bob was rejected in %s of flooding", contentionLimit)
	}
}
