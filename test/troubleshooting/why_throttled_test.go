package troubleshooting_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/defaults"
	"github.com/apf-operator/apf-operator/test/envtestutil"
	"github.com/apf-operator/apf-operator/test/harness"
)

// whyPage is docs/why-throttled.md, run by TestWhyThrottledPage.
var whyPage = filepath.Join(envtestutil.RepoRoot(), "docs", "why-throttled.md")

// step is one command of the page, in order, and what it must show.
type step struct {
	command string
	check   check
}

// auditLog is the page's audit.log in the test: ci-bot's list of pods in team-b, as
// kube-apiserver writes it at level Metadata.
const auditLog = `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"0b4e2a7c-0000-4000-8000-000000000001",` +
	`"stage":"ResponseComplete","requestURI":"/api/v1/namespaces/team-b/pods?limit=500","verb":"list",` +
	`"user":{"username":"ci-bot","groups":["team-b","system:authenticated"]},"sourceIPs":["10.0.0.7"],"userAgent":"kubectl/v1.36.3",` +
	`"objectRef":{"resource":"pods","namespace":"team-b","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":200},` +
	`"requestReceivedTimestamp":"2026-11-26T10:00:00.000000Z","stageTimestamp":"2026-11-26T10:00:00.020000Z"}` + "\n"

var (
	explainedSchema = regexp.MustCompile(`FlowSchema: +(\S+) \(uid ([0-9a-f-]{36})`)
	explainedLevel  = regexp.MustCompile(`Priority level: +(\S+) \(uid ([0-9a-f-]{36})`)
)

// whyHeaders is the page's command that shows kube-apiserver's X-Kubernetes-PF-* headers.
const whyHeaders = `kubectl get pods -n team-b --as ci-bot --as-group team-b -v=8 2>&1 | grep -i -e 'x-kubernetes-pf-' -e 'retry-after'`

// whySteps are the page's commands in order. The checks of the commands other changes add
// (top, replay) only require that they run and print something.
var whySteps = []step{
	{whyHeaders,
		func(t *testing.T, s *state, r result) {
			s.flowSchemaUID, s.priorityLevelUID = headerUIDs(t, r)
		}},
	{`kubectl apf top --once`, printedAll("LEVEL", "global-default", "workload-low")},
	{`kubectl apf explain --as ci-bot --as-group team-b --verb list --resource pods -n team-b`,
		func(t *testing.T, s *state, r result) {
			wantOutput(t, r, 0, "FlowSchema:      global-default", "Nominal seats:", "of the server's",
				`Distinguisher:   "ci-bot" (ByUser)`, "Operator:        the operator's FlowSchema workload-high matches, but it is not projected (ShadowedByNative)")
			wantExplainedUIDs(t, r, s.flowSchemaUID, s.priorityLevelUID)
		}},
	{`apf-operator validate --target native -f team-b.yaml`, func(t *testing.T, _ *state, r result) {
		if r.code != 0 || !strings.Contains(r.stderr, "2 object(s) checked for --target native: 0 error(s), 0 warning(s)") {
			t.Errorf("exit %d:\n%s%s", r.code, r.stdout, r.stderr)
		}
	}},
	{`apf-operator replay --audit-log audit.log -f team-b.yaml`, printedAll("global-default", "apf-team-b")},
	{`kubectl apf explain -f team-b.yaml --as ci-bot --as-group team-b --verb list --resource pods -n team-b`,
		func(t *testing.T, _ *state, r result) {
			wantOutput(t, r, 0, "FlowSchema:      apf-team-b (uid none", "Priority level:  apf-team-b",
				`Distinguisher:   "team-b" (ByNamespace)`, "Read from:       offline:")
		}},
	{`kubectl apply -f team-b.yaml`, func(t *testing.T, _ *state, r result) {
		wantOutput(t, r, 0, "requestpriority.flowcontrol.apf-operator.io/team-b", "flowschema.flowcontrol.apf-operator.io/team-b")
	}},
	{`kubectl wait --for=condition=Projected --timeout=60s flowschemas.flowcontrol.apf-operator.io/team-b requestpriorities.flowcontrol.apf-operator.io/team-b`,
		func(t *testing.T, _ *state, r result) { wantOutput(t, r, 0, "condition met") }},
	{`kubectl apf explain --as ci-bot --as-group team-b --verb list --resource pods -n team-b`,
		func(t *testing.T, _ *state, r result) {
			wantOutput(t, r, 0, "FlowSchema:      apf-team-b (uid", "projected by the operator from FlowSchema/team-b",
				"Priority level:  apf-team-b", `Distinguisher:   "team-b" (ByNamespace)`,
				"the operator's FlowSchema team-b matches; kube-apiserver applies its projection apf-team-b")
			fs, pl := explainedSchema.FindStringSubmatch(r.stdout), explainedLevel.FindStringSubmatch(r.stdout)
			if fs == nil || pl == nil {
				t.Fatalf("no UIDs in:\n%s", r.stdout)
			}
			waitForHeaders(t, fs[2], pl[2]) // "the headers of step 1 carry the new UIDs"
		}},
}

// TestWhyThrottledPage runs docs/why-throttled.md: its manifests are written where its commands
// read them, and every command of its sh blocks runs, in order, with kubectl and apf-operator
// (also as the kubectl plugin) against the suite's cluster.
func TestWhyThrottledPage(t *testing.T) {
	dir := t.TempDir()
	plugin := filepath.Join(binDir, "kubectl-apf")
	if err := os.Symlink(filepath.Join(binDir, "apf-operator"), plugin); err != nil && !errors.Is(err, fs.ErrExist) {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "audit.log"), []byte(auditLog), 0o644); err != nil {
		t.Fatal(err)
	}
	waitDefaultsReconciled(t)
	s := &state{}
	next := 0
	for _, b := range readBlocksOf(t, whyPage) {
		if b.Lang == "yaml" && b.Attrs["file"] != "" {
			writePageFile(t, dir, b.Attrs["file"], b.Lines)
			continue
		}
		if b.Lang != "sh" {
			continue
		}
		for _, command := range commands(b) {
			if next >= len(whySteps) || whySteps[next].command != command {
				t.Fatalf("the page's command #%d is %q; the test expects %q", next+1, command, expected(next))
			}
			st := whySteps[next]
			next++
			t.Run(command, func(t *testing.T) { st.check(t, s, runCommand(t, dir, suite.Cluster.Kubeconfig, command)) })
		}
	}
	if next != len(whySteps) {
		t.Errorf("the page lacks the test's commands from #%d, %q", next+1, whySteps[next].command)
	}
}

// waitDefaultsReconciled waits until every default FlowSchema exists and reports condition
// Projected, as on the page's cluster, where the operator has long been running: explain's
// Operator: line relates its answer to that condition.
func waitDefaultsReconciled(t *testing.T) {
	t.Helper()
	harness.Eventually(t, time.Minute, "every default FlowSchema with condition Projected", func(ctx context.Context) error {
		objs, err := harness.Objects(ctx, suite.Client)
		if err != nil {
			return err
		}
		for name := range defaults.Names()["FlowSchema"] {
			o, ok := objs["fs/"+name]
			if !ok || meta.FindStatusCondition(o.Conditions, flowv1.ConditionProjected) == nil {
				return fmt.Errorf("FlowSchema %s has no condition Projected yet", name)
			}
		}
		return nil
	})
}

func writePageFile(t *testing.T, dir, name string, lines []string) {
	t.Helper()
	if filepath.Base(name) != name {
		t.Fatalf("the page's file=%q must be a plain file name", name)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func expected(i int) string {
	if i < len(whySteps) {
		return whySteps[i].command
	}
	return "no more commands"
}

// printedAll requires exit 0 and every one of words in the output.
func printedAll(words ...string) func(*testing.T, *state, result) {
	return func(t *testing.T, _ *state, r result) {
		for _, w := range words {
			if r.code != 0 || !strings.Contains(r.stdout, w) {
				t.Errorf("exit %d, want 0 and output naming %q:\n%s%s", r.code, w, r.stdout, r.stderr)
				return
			}
		}
	}
}

// headerUIDs returns the X-Kubernetes-PF-* UIDs of the last response in kubectl -v=8 output:
// the request's own, after kubectl's discovery requests (GET /api, /apis), which carry theirs.
func headerUIDs(t *testing.T, r result) (string, string) {
	t.Helper()
	fs, pl := fsUIDHeader.FindAllStringSubmatch(r.stdout, -1), plUIDHeader.FindAllStringSubmatch(r.stdout, -1)
	if r.code != 0 || len(fs) == 0 || len(pl) == 0 {
		t.Fatalf("no X-Kubernetes-PF-* headers (exit %d):\n%s%s", r.code, r.stdout, r.stderr)
	}
	return fs[len(fs)-1][1], pl[len(pl)-1][1]
}

// wantExplainedUIDs requires explain's FlowSchema and level UIDs to be the headers'.
func wantExplainedUIDs(t *testing.T, r result, fsUID, plUID string) {
	t.Helper()
	fs, pl := explainedSchema.FindStringSubmatch(r.stdout), explainedLevel.FindStringSubmatch(r.stdout)
	if fs == nil || pl == nil || fs[2] != fsUID || pl[2] != plUID {
		t.Errorf("explain's UIDs differ from kube-apiserver's headers (FlowSchema %s, level %s):\n%s", fsUID, plUID, r.stdout)
	}
}

// waitForHeaders waits until kube-apiserver's headers for the page's request carry the UIDs.
func waitForHeaders(t *testing.T, fsUID, plUID string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		r := runCommand(t, t.TempDir(), suite.Cluster.Kubeconfig, whyHeaders)
		fs, pl := headerUIDs(t, r)
		if fs == fsUID && pl == plUID {
			return
		}
		select {
		case <-ctx.Done():
			objects := runCommand(t, t.TempDir(), suite.Cluster.Kubeconfig, "kubectl get flowschemas.flowcontrol.apiserver.k8s.io "+
				"-o custom-columns=UID:.metadata.uid,NAME:.metadata.name,PREC:.spec.matchingPrecedence,LEVEL:.spec.priorityLevelConfiguration.name,"+
				"COND:.status.conditions[*].type,STATUS:.status.conditions[*].status; "+
				"kubectl get prioritylevelconfigurations.flowcontrol.apiserver.k8s.io -o custom-columns=UID:.metadata.uid,NAME:.metadata.name")
			t.Fatalf("kube-apiserver's headers say FlowSchema %s, level %s after 30 s; explain said %s, %s; the native objects:\n%s%s",
				fs, pl, fsUID, plUID, objects.stdout, objects.stderr)
		case <-time.After(300 * time.Millisecond):
		}
	}
}
