package importer

import (
	"strings"
	"testing"

	"github.com/apf-operator/apf-operator/internal/nativeview/bootstrapset"
)

// betaLevel is plc at a beta version, with v1beta1/v1beta2's name of the shares and the given
// shares ("" leaves them out).
func betaLevel(version, name, shares string) string {
	out := strings.Replace(plc(name, ""), "/v1\n", "/"+version+"\n", 1)
	if shares == "" {
		return strings.Replace(out, "nominalConcurrencyShares: 10, ", "", 1)
	}
	return strings.Replace(out, "nominalConcurrencyShares: 10", "assuredConcurrencyShares: "+shares, 1)
}

// TestBetaVersions checks v1beta1 and v1beta2 as kube-apiserver converts them:
// assuredConcurrencyShares is the nominal shares, 0 or absent means 30, an absent
// lendablePercent is 0; their FlowSchemas read as v1's.
func TestBetaVersions(t *testing.T) {
	for _, version := range []string{"v1beta1", "v1beta2"} {
		in := betaLevel(version, "five", "5") + betaLevel(version, "zero", "0") + betaLevel(version, "absent", "") +
			strings.Replace(fs("to-five", 100, "five", ""), "/v1\n", "/"+version+"\n", 1)
		code, out, errOut := run(t, in, "-f", "-")
		if code != ExitOK {
			t.Fatalf("%s: exit %d: %s", version, code, errOut)
		}
		for _, want := range []string{"name: five\nspec:\n  assuredConcurrencyShares: 5\n  handSize: 4\n  lendablePercent: 0\n",
			"name: zero\nspec:\n  assuredConcurrencyShares: 30\n", "name: absent\nspec:\n  assuredConcurrencyShares: 30\n",
			"  name: to-five\n"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: output lacks %q:\n%s", version, want, out)
			}
		}
	}
}

// TestMetadata checks that labels and annotations are carried over, and that those describing
// the native object itself are dropped with a note.
func TestMetadata(t *testing.T) {
	in := plc("mine", ", labels: {team: a}, annotations: {owner: ops, kubectl.kubernetes.io/last-applied-configuration: x}") +
		fs("mine", 100, "mine", ", labels: {team: a}")
	code, out, errOut := run(t, in, "-f", "-")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.Count(out, "  labels:\n    team: a\n") != 2 || !strings.Contains(out, "  annotations:\n    owner: ops\n") ||
		strings.Contains(out, "last-applied") {
		t.Errorf("labels and annotations not carried over as expected:\n%s", out)
	}
	want := `note: PriorityLevelConfiguration "mine": not carried over, as they describe the native object itself: ` +
		"kubectl.kubernetes.io/last-applied-configuration"
	if !strings.Contains(errOut, want) {
		t.Errorf("stderr lacks %q:\n%s", want, errOut)
	}
}

// TestKubernetesVersion checks --kubernetes-version: the bootstrap set it names is the one
// references bind to, an unknown version is a usage error, and it needs -f.
func TestKubernetesVersion(t *testing.T) {
	in := fs("mine", 100, "workload-high", "")
	code, out, errOut := run(t, in, "-f", "-", "--kubernetes-version", "1.29")
	if code != ExitOK || !strings.Contains(out, "bound to that level of kube-apiserver 1.29's bootstrap set (k8s.io/apiserver@v0.29.") ||
		!strings.Contains(out, "  nativeLevel: workload-high\n") {
		t.Errorf("--kubernetes-version 1.29: exit %d:\n%s\n%s", code, out, errOut)
	}
	code, _, errOut = run(t, in, "-f", "-", "--kubernetes-version", "1.12")
	if code != ExitUsage || !strings.Contains(errOut, "--kubernetes-version: no bootstrap set for Kubernetes version \"1.12\": the bootstrap sets known are those of 1.29 to "+
		bootstrapset.Newest()) {
		t.Errorf("--kubernetes-version 1.12: exit %d: %s", code, errOut)
	}
	code, _, errOut = run(t, "", "--from-cluster", "--kubernetes-version", "1.30")
	if code != ExitUsage || !strings.Contains(errOut, "--kubernetes-version is for -f") {
		t.Errorf("--from-cluster --kubernetes-version: exit %d: %s", code, errOut)
	}
}
