package operator

import (
	"os"
	"path/filepath"
	"testing"
)

// TestKubeconfigHasNoClientSideLimit: with --kubeconfig the operator's client has no
// client-side rate limit (client-go's default would be 5 requests per second), as with
// ctrl.GetConfig in a pod.
func TestKubeconfigHasNoClientSideLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	const kubeconfig = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`
	if err := os.WriteFile(path, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadRESTConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.QPS != -1 {
		t.Errorf("QPS %v, want -1 (no client-side limit)", cfg.QPS)
	}
}
