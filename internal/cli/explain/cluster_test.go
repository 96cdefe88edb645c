package explain

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRestConfigContext checks that --context picks the context of the --kubeconfig file
// (as kubectl's own --context does), and that without it the current context is used.
func TestRestConfigContext(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters:
- {name: staging, cluster: {server: "https://staging.example:6443"}}
- {name: prod, cluster: {server: "https://prod.example:6443"}}
users:
- {name: u, user: {token: t}}
contexts:
- {name: staging, context: {cluster: staging, user: u}}
- {name: prod, context: {cluster: prod, user: u}}
current-context: staging
`), 0o600); err != nil {
		t.Fatal(err)
	}
	for kubeContext, want := range map[string]string{"": "https://staging.example:6443", "prod": "https://prod.example:6443"} {
		cfg, err := restConfig(kubeconfig, kubeContext)
		if err != nil || cfg.Host != want {
			t.Errorf("restConfig(--context %q) = %v, %v; want host %s", kubeContext, cfg, err, want)
		}
	}
	t.Setenv("KUBECONFIG", kubeconfig) // without --kubeconfig: found as kubectl finds it
	if cfg, err := restConfig("", "prod"); err != nil || cfg.Host != "https://prod.example:6443" {
		t.Errorf("restConfig($KUBECONFIG, --context prod) = %v, %v", cfg, err)
	}
	if _, err := restConfig(kubeconfig, "dev"); err == nil {
		t.Error("restConfig(--context dev): no error for a context the file lacks")
	}
}
