package troubleshooting_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// manifests is the configuration the page's "./clusters/prod/apf/" holds in the test: a
// RequestPriority and a FlowSchema for alice's requests, both expressible natively.
const manifests = `apiVersion: flowcontrol.apf-operator.io/v1alpha1
kind: RequestPriority
metadata: {name: tenants}
spec: {priorityLevel: 5000, assuredConcurrencyShares: 10, queuesPerWidth: 64, handSize: 6, queueLengthLimit: 50}
---
apiVersion: flowcontrol.apf-operator.io/v1alpha1
kind: FlowSchema
metadata: {name: tenants}
spec:
  matchingPriority: 5000
  requestPriority: {name: tenants}
  flowDistinguisher: {source: user}
  match:
  - and:
    - equals: {field: user, value: alice}
`

// deployedOnly are the sections whose commands need the operator deployed as pods (a
// Deployment, its logs, the webhook's Service and certificate), which envtest has not: their
// commands are listed, not run.
var deployedOnly = map[string]bool{"The webhook does not answer": true}

// elsewhere are commands of the page that need more than one cluster or tools the test machine
// has not (the drift runbook compares two clusters' objects with yq), or a Deployment's logs;
// they are listed, not run, with the reason.
var elsewhere = map[string]string{
	"kubectl -n apf-operator-system logs deploy/apf-operator | grep apf-projection":                                     "needs the operator deployed as pods",
	"kubectl --context good get rp,afs -o yaml > good.yaml":                                                             "needs two clusters",
	"kubectl --context drifted get rp,afs -o yaml > drifted.yaml":                                                       "needs two clusters",
	"diff <(yq '.items[] | [.metadata.name, .spec]' good.yaml) <(yq '.items[] | [.metadata.name, .spec]' drifted.yaml)": "needs two clusters and yq",
}

// state carries what earlier commands showed to later checks.
type state struct {
	flowSchemaUID, priorityLevelUID string
}

// check verifies one command's result.
type check func(t *testing.T, s *state, r result)

// asAlice are the commands run with alice's credentials (the client whose requests are
// investigated); the others run as the cluster admin.
var asAlice = map[string]bool{
	`kubectl get pods -v=8 2>&1 | grep -i -e 'x-kubernetes-pf-' -e 'retry-after'`: true,
}

var (
	fsUIDHeader = regexp.MustCompile(`(?i)X-Kubernetes-PF-FlowSchema-UID: *([0-9a-f-]{36})`)
	plUIDHeader = regexp.MustCompile(`(?i)X-Kubernetes-PF-PriorityLevel-UID: *([0-9a-f-]{36})`)
)

// checks says, for every command of the page (placeholders replaced), what it must show.
var checks = map[string]check{
	`kubectl get pods -v=8 2>&1 | grep -i -e 'x-kubernetes-pf-' -e 'retry-after'`: func(t *testing.T, s *state, r result) {
		fs, pl := fsUIDHeader.FindStringSubmatch(r.stdout), plUIDHeader.FindStringSubmatch(r.stdout)
		if r.code != 0 || fs == nil || pl == nil {
			t.Fatalf("no X-Kubernetes-PF-* headers (exit %d):\n%s%s", r.code, r.stdout, r.stderr)
		}
		s.flowSchemaUID, s.priorityLevelUID = fs[1], pl[1]
	},
	`kubectl get flowschemas.flowcontrol.apiserver.k8s.io   -o custom-columns='UID:.metadata.uid,NAME:.metadata.name,SOURCE:.metadata.annotations.flowcontrol\.apf-operator\.io/source'`: func(t *testing.T, s *state, r result) {
		wantRow(t, r, s.flowSchemaUID, "apf-tenants", "FlowSchema/tenants")
	},
	`kubectl get prioritylevelconfigurations.flowcontrol.apiserver.k8s.io   -o custom-columns='UID:.metadata.uid,NAME:.metadata.name,SOURCE:.metadata.annotations.flowcontrol\.apf-operator\.io/source'`: func(t *testing.T, s *state, r result) {
		wantRow(t, r, s.priorityLevelUID, "apf-tenants", "RequestPriority/tenants")
	},
	`apf-operator explain -f ./clusters/prod/apf/ --as alice --as-group system:authenticated   --verb list --resource pods --namespace team-a          # against the manifests in Git`: func(t *testing.T, _ *state, r result) {
		wantExplained(t, r)
	},
	`apf-operator explain --as alice --verb get --path /healthz     # against the live cluster (kubeconfig)`: func(t *testing.T, _ *state, r result) {
		// kube-apiserver's probes schema (precedence 2, every authenticated user) takes /healthz
		// ahead of the projection of tenants, which also matches it.
		wantOutput(t, r, 0, "FlowSchema:      probes (uid ", "Priority level:  exempt (uid ", "the operator's FlowSchema "+
			"tenants matches and is projected, but kube-apiserver's probes (matchingPrecedence 2) takes the request first")
	},
	`apf-operator explain --help                                # every attribute it takes; -o json for tools`: func(t *testing.T, _ *state, r result) {
		if r.code != 0 || !strings.Contains(r.stdout, "--namespace") || !strings.Contains(r.stdout, "-o, --output string") {
			t.Errorf("exit %d, help:\n%s%s", r.code, r.stdout, r.stderr)
		}
	},
	`kubectl get --raw /debug/api_priority_and_fairness/dump_priority_levels   # seats in use, waiting requests per level`: func(t *testing.T, _ *state, r result) {
		// The projected level beside kube-apiserver's own (the defaults of enforcement native
		// project no level).
		wantOutput(t, r, 0, "PriorityLevelName", "\napf-tenants,", "\nglobal-default,")
	},
	`kubectl get --raw /debug/api_priority_and_fairness/dump_queues | grep apf-   # the queues of the projected levels`: func(t *testing.T, _ *state, r result) {
		// One line per queue: the level's 64 queues are listed.
		if n := strings.Count(r.stdout, "apf-tenants"); r.code != 0 || n != 64 {
			t.Errorf("exit %d, %d queue lines of apf-tenants, want 64:\n%s%s", r.code, n, r.stdout, r.stderr)
		}
	},
	`kubectl get apf                     # the Ready and Projected columns`: func(t *testing.T, _ *state, r result) {
		wantOutput(t, r, 0, "READY", "PROJECTED", "requestpriority.flowcontrol.apf-operator.io/tenants",
			"flowschema.flowcontrol.apf-operator.io/tenants")
		for _, line := range strings.Split(r.stdout, "\n") {
			if strings.Contains(line, "/tenants ") && strings.Count(line, " True ") < 2 {
				t.Errorf("tenants is not Ready and Projected: %q", line)
			}
		}
	},
	`apf-operator validate --target native -f ./clusters/prod/apf/   # why, for each object, offline`: func(t *testing.T, _ *state, r result) {
		wantOutput(t, r, 0)
		if !strings.Contains(r.stderr, "2 object(s) checked for --target native: 0 error(s), 0 warning(s)") {
			t.Errorf("summary: %q", r.stderr)
		}
	},
	`kubectl get afs -o custom-columns='NAME:.metadata.name,READY:.status.conditions[?(@.type=="Ready")].status,REASON:.status.conditions[?(@.type=="Ready")].reason'`: func(t *testing.T, _ *state, r result) {
		wantFields(t, r, "tenants", "True", "Accepted")
	},
	`kubectl describe afs tenants         # the condition's message names the field and the fix, events show transitions`: func(t *testing.T, _ *state, r result) {
		wantOutput(t, r, 0, "Type:", "Ready", "Projected", "Message:")
	},
	// The alerts' runbooks.
	`kubectl get apf`: func(t *testing.T, _ *state, r result) {
		wantOutput(t, r, 0, "READY", "requestpriority.flowcontrol.apf-operator.io/tenants")
	},
	`kubectl get rp,afs -o custom-columns='NAME:.metadata.name,REASON:.status.conditions[?(@.type=="Ready")].reason,MESSAGE:.status.conditions[?(@.type=="Ready")].message'`: func(t *testing.T, _ *state, r result) {
		wantRowPrefix(t, r, "tenants Accepted the FlowSchema is in effect")
	},
	`kubectl get rp,afs -o custom-columns='NAME:.metadata.name,PROJECTED:.status.conditions[?(@.type=="Projected")].reason,MESSAGE:.status.conditions[?(@.type=="Projected")].message'`: func(t *testing.T, _ *state, r result) {
		wantRowPrefix(t, r, "tenants Projected ")
	},
	`kubectl get events -A --field-selector reportingComponent=apf-operator,type=Warning`: func(t *testing.T, _ *state, r result) {
		// Nothing failed: the query is valid and finds no Warning.
		if r.code != 0 || strings.Contains(r.stdout, "Warning") {
			t.Errorf("exit %d, want 0 and no Warning event:\n%s%s", r.code, r.stdout, r.stderr)
		}
	},
	`kubectl get events -A --field-selector reportingComponent=apf-operator`: func(t *testing.T, _ *state, r result) {
		// The operator created the defaults: their events are the ones the page describes (a
		// new object's first Ready=True has no event of its own).
		wantOutput(t, r, 0, "Created", "requestpriority/system-top", "flowschema/system-top")
	},
}

// TestPageCommands runs every command of the page's sh blocks in order and checks its output;
// a command without a check, or a check whose command is no longer on the page, fails the
// test, so that the page and the test cannot drift apart.
func TestPageCommands(t *testing.T) {
	dir := t.TempDir()
	apfDir := filepath.Join(dir, "clusters", "prod", "apf")
	if err := os.MkdirAll(apfDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(apfDir, "tenants.yaml"), []byte(manifests), 0o644); err != nil {
		t.Fatal(err)
	}
	applyAndWait(t, dir)
	s := &state{}
	seen := map[string]bool{}
	for _, b := range readBlocks(t) {
		if b.Lang != "sh" { // ```sh run=cluster: test/docs's class
			continue
		}
		for _, command := range commands(b) {
			command = placeholders.Replace(command)
			if deployedOnly[b.Heading] {
				t.Logf("not run (needs the operator deployed as pods): %s", command)
				continue
			}
			if why, ok := elsewhere[command]; ok {
				t.Logf("not run (%s): %s", why, command)
				continue
			}
			c, ok := checks[command]
			if !ok {
				t.Errorf("the page's command has no check in this test: %q", command)
				continue
			}
			seen[command] = true
			kubeconfig := suite.Cluster.Kubeconfig
			if asAlice[command] {
				kubeconfig = aliceKubeconfig
			}
			t.Run(command, func(t *testing.T) { c(t, s, runCommand(t, dir, kubeconfig, command)) })
		}
	}
	for command := range checks {
		if !seen[command] {
			t.Errorf("checked command not found on the page: %q", command)
		}
	}
}

// applyAndWait applies the manifests with kubectl and waits until kube-apiserver enforces them.
func applyAndWait(t *testing.T, dir string) {
	t.Helper()
	runAsAdmin(t, dir,
		"kubectl apply -f ./clusters/prod/apf/",
		"kubectl wait --for=condition=Projected --timeout=60s requestpriorities.flowcontrol.apf-operator.io/tenants flowschemas.flowcontrol.apf-operator.io/tenants",
		"kubectl wait --for=condition=Projected --timeout=60s requestpriorities.flowcontrol.apf-operator.io --all",
	)
}

// wantOutput requires the exit code and each text in standard output.
func wantOutput(t *testing.T, r result, code int, texts ...string) {
	t.Helper()
	if r.code != code {
		t.Errorf("exit %d, want %d:\n%s%s", r.code, code, r.stdout, r.stderr)
	}
	for _, text := range texts {
		if !strings.Contains(r.stdout, text) {
			t.Errorf("output lacks %q:\n%s%s", text, r.stdout, r.stderr)
		}
	}
}

// explained is what explain prints for alice's requests: kube-apiserver's FlowSchema and level,
// the projections of our FlowSchema and RequestPriority tenants.
var explained = regexp.MustCompile(`(?s)FlowSchema: +apf-tenants \(uid .*projected by the operator from FlowSchema/tenants.*` +
	`Priority level: +apf-tenants .*Operator: +the operator's FlowSchema tenants matches; kube-apiserver applies its projection apf-tenants`)

// wantExplained requires explain's classification of alice's request.
func wantExplained(t *testing.T, r result) {
	t.Helper()
	if r.code != 0 || !explained.MatchString(r.stdout) {
		t.Errorf("exit %d, want a match for %s:\n%s%s", r.code, explained, r.stdout, r.stderr)
	}
}

// wantRow requires a row of exactly these fields (UID, NAME, SOURCE).
func wantRow(t *testing.T, r result, fields ...string) {
	t.Helper()
	if fields[0] == "" {
		t.Fatal("no UID from the response headers to look up")
	}
	wantFields(t, r, fields...)
}

// wantRowPrefix requires exit 0 and a row that starts with prefix, once blanks are folded.
func wantRowPrefix(t *testing.T, r result, prefix string) {
	t.Helper()
	for _, line := range strings.Split(r.stdout, "\n") {
		if r.code == 0 && strings.HasPrefix(strings.Join(strings.Fields(line), " ")+" ", prefix) {
			return
		}
	}
	t.Errorf("exit %d, no row starting %q in:\n%s%s", r.code, prefix, r.stdout, r.stderr)
}

// wantFields requires a line of standard output whose whitespace-separated fields are fields.
func wantFields(t *testing.T, r result, fields ...string) {
	t.Helper()
	want := strings.Join(fields, " ")
	for _, line := range strings.Split(r.stdout, "\n") {
		if strings.Join(strings.Fields(line), " ") == want {
			return
		}
	}
	t.Errorf("exit %d, no row %q in:\n%s%s", r.code, want, r.stdout, r.stderr)
}
