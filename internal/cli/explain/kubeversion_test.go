package explain

import (
	"strings"
	"testing"

	"github.com/apf-operator/apf-operator/internal/nativeview/bootstrapset"
)

// TestKubernetesVersion checks that --kubernetes-version picks the offline bootstrap set: a
// kube-system service account's ConfigMap lock goes to workload-leader-election up to 1.33 and
// to kube-system-service-accounts on the newest set; an unknown version, or the flag without
// -f, is a usage error.
func TestKubernetesVersion(t *testing.T) {
	args := []string{"-f", samples(), "--as", "system:serviceaccount:kube-system:some-controller", "--verb", "update",
		"--resource", "configmaps", "-n", "kube-system", "--name", "lock"}
	for _, c := range []struct{ version, schema, origin string }{
		{"1.29", "FlowSchema:      workload-leader-election", "offline: kube-apiserver 1.29's bootstrap objects (k8s.io/apiserver@v0.29.15)"},
		{bootstrapset.Newest(), "FlowSchema:      kube-system-service-accounts", "offline: kube-apiserver " + bootstrapset.Newest()},
	} {
		code, out, errOut := run(t, append(args, "--kubernetes-version", c.version)...)
		if code != 0 || !strings.Contains(out, c.schema) || !strings.Contains(out, c.origin) {
			t.Errorf("--kubernetes-version %s: exit %d, want %q and %q:\n%s%s", c.version, code, c.schema, c.origin, out, errOut)
		}
	}
	if code, _, errOut := run(t, append(args, "--kubernetes-version", "1.28")...); code != 2 ||
		!strings.Contains(errOut, `--kubernetes-version: no bootstrap set for Kubernetes version "1.28"`) {
		t.Errorf("--kubernetes-version 1.28: exit %d: %s", code, errOut)
	}
	if code, _, errOut := run(t, "--as", "alice", "--path", "/healthz", "--kubernetes-version", "1.30"); code != 2 ||
		!strings.Contains(errOut, "needs -f") {
		t.Errorf("--kubernetes-version without -f: exit %d: %s", code, errOut)
	}
}
