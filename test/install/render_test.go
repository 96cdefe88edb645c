package install

import (
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/apf-operator/apf-operator/test/envtestutil"
)

// rendered is one object of `helm template`'s output, as much of it as the checks read.
type rendered struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name        string            `json:"name"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Rules []struct {
		APIGroups []string `json:"apiGroups"`
		Resources []string `json:"resources"`
		Verbs     []string `json:"verbs"`
	} `json:"rules"`
	Spec struct {
		Template struct {
			Spec struct {
				Containers []struct {
					Args []string `json:"args"`
				} `json:"containers"`
			} `json:"spec"`
		} `json:"template"`
	} `json:"spec"`
}

// renderChart runs `helm template` with --set values and returns the objects by kind/name.
func renderChart(t *testing.T, set ...string) map[string]rendered {
	t.Helper()
	manifests, err := envtestutil.HelmTemplate(namespace, set...)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]rendered{}
	for _, doc := range strings.Split(manifests, "\n---") {
		var r rendered
		if err := yaml.Unmarshal([]byte(doc), &r); err != nil {
			t.Fatalf("helm template output: %v\n%s", err, doc)
		}
		if r.Kind != "" {
			out[r.Kind+"/"+r.Metadata.Name] = r
		}
	}
	return out
}

// TestChartRendersUninstallWhateverEnforcement: the post-delete hook that deletes the
// projected native objects renders with enforcement native and none alike (an operator last
// run with either may have left some), the manager may delete native objects in both modes
// (none prunes what native projected), and native.unmatched reaches the manager's flags.
func TestChartRendersUninstallWhateverEnforcement(t *testing.T) {
	for _, tc := range []struct {
		set           []string
		wantUnmatched string
		wantVerbs     []string
	}{
		{nil, "kube-apiserver", []string{"get", "list", "watch", "create", "patch", "delete"}},
		{[]string{"enforcement=none"}, "kube-apiserver", []string{"get", "list", "watch", "delete", "patch"}}, // patch: restoring donors
		{[]string{"native.unmatched=operator"}, "operator", []string{"get", "list", "watch", "create", "patch", "delete"}},
	} {
		objs := renderChart(t, tc.set...)
		job, ok := objs["Job/"+pruneJob]
		switch {
		case !ok:
			t.Errorf("%v: no Job %s", tc.set, pruneJob)
		case job.Metadata.Annotations["helm.sh/hook"] != "post-delete" ||
			!slices.Equal(job.Spec.Template.Spec.Containers[0].Args, []string{"prune-native"}):
			t.Errorf("%v: Job %s is not the prune-native post-delete hook: %+v", tc.set, pruneJob, job)
		}
		var verbs []string
		for _, r := range objs["ClusterRole/apf-operator-manager"].Rules {
			if slices.Contains(r.APIGroups, "flowcontrol.apiserver.k8s.io") {
				verbs = append(verbs, r.Verbs...)
			}
		}
		if !slices.Equal(verbs, tc.wantVerbs) {
			t.Errorf("%v: the manager's verbs on native objects %v, want %v", tc.set, verbs, tc.wantVerbs)
		}
		args := objs["Deployment/"+deployment].Spec.Template.Spec.Containers[0].Args
		if !slices.Contains(args, "--native-unmatched="+tc.wantUnmatched) {
			t.Errorf("%v: manager args %v, want --native-unmatched=%s", tc.set, args, tc.wantUnmatched)
		}
	}
}
