package explain

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestOfflineBoundLevel: offline, a FlowSchema whose RequestPriority is bound to workload-high is
// projected onto kube-apiserver's own workload-high (a bootstrap level), and explain names the
// binding and the one queuing field whose in-process value differs from that level's.
func TestOfflineBoundLevel(t *testing.T) {
	code, out, errOut := run(t, "-f", filepath.Join("testdata", "bound.yaml"), "--as", "u", "--verb", "list",
		"--resource", "pods", "-n", "team-a")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"FlowSchema:      apf-team-a", "Priority level:  workload-high",
		"Operator level:  team-a, bound to the native level workload-high",
		"spec.queuesPerWidth: in-process uses 1; kube-apiserver uses workload-high's 128", "request width"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "spec.assuredConcurrencyShares") || strings.Contains(out, "spec.lendablePercent") {
		t.Errorf("fields whose in-process values are workload-high's own are listed:\n%s", out)
	}
}
