package explain

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"

	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apf/request"
	"github.com/apf-operator/apf-operator/internal/cli/cmdutil"
	"github.com/apf-operator/apf-operator/internal/defaults"
)

// run executes explain with args as the binary would and returns its exit code and output.
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	code := cmdutil.Execute(NewCommand(streams), args, streams)
	return code, out.String(), errOut.String()
}

// samples is config/samples, from this package's directory (where go test runs it).
func samples() string {
	return filepath.Join("..", "..", "..", "config", "samples")
}

func proposal() string {
	return filepath.Join(samples(), "..", "..", "internal", "validation", "testdata", "valid", "proposal.yaml")
}

func TestExplainDefaults(t *testing.T) {
	cfg := effective.Compute(defaults.RequestPriorities(), defaults.FlowSchemas())
	cases := []struct {
		name          string
		attrs         request.Attributes
		schema, level string
		conjunction   int
		distinguisher string
		handLen       int
	}{
		{"node heartbeat", request.Attributes{User: "system:node:n1", Groups: []string{"system:nodes"}, Verb: "update",
			Resource: "nodes", Name: "n1", ResourceRequest: true}, "system-high", "system-high", 0, "system:node:n1", 6},
		{"garbage collector", request.Attributes{User: "system:controller:garbage-collector", Verb: "delete",
			Resource: "pods", Namespace: "a", ResourceRequest: true}, "system-low", "system-low", 0, "", 1},
		{"admin", request.Attributes{User: "root", Groups: []string{"system:masters"}, Verb: "create",
			Resource: "pods", Namespace: "a", ResourceRequest: true}, "system-top", "system-top", -1, "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := Explain(cfg, &c.attrs)
			if e.FlowSchema != c.schema || e.RequestPriority.Name != c.level || e.Conjunction != c.conjunction ||
				e.Distinguisher != c.distinguisher || len(e.Hand) != c.handLen {
				t.Fatalf("got schema %s #%d, priority %s, distinguisher %q, hand %v; want %s #%d, %s, %q, %d queues",
					e.FlowSchema, e.Conjunction, e.RequestPriority.Name, e.Distinguisher, e.Hand,
					c.schema, c.conjunction, c.level, c.distinguisher, c.handLen)
			}
		})
	}
}

// TestOffline checks that the offline answer leads with kube-apiserver's classification of the
// manifests' projection, adds the implicit groups, and says why ours is not applied.
func TestOffline(t *testing.T) {
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"-f", samples(), "--as", "u", "--as-group", "tenants", "--verb", "list", "--resource", "pods", "-n", "t-1"},
			[]string{"FlowSchema:      apf-tenant-workloads (uid none: not read from a cluster", "projected by the operator from FlowSchema/tenant-workloads",
				"Priority level:  apf-tenant-workloads", "Nominal seats:", "of the server's 600", `Distinguisher:   "t-1" (ByNamespace)`,
				"kube-apiserver applies its projection apf-tenant-workloads", "offline: kube-apiserver 1.37's bootstrap objects (k8s.io/apiserver@v0.37.0)"}},
		{[]string{"-f", samples(), "--as", "root", "--as-group", "system:masters", "--verb", "list", "--resource", "pods", "-n", "t-1"},
			[]string{"FlowSchema:      exempt (", "exempt: never queued", "none needed (exempt)", "system:masters is always exempt"}},
		// A service account gets its groups: kube-apiserver's service-accounts schema takes it.
		{[]string{"-f", samples(), "--as", "system:serviceaccount:a:b", "--verb", "get", "--resource", "pods", "-n", "a"},
			[]string{"groups=system:serviceaccounts,system:serviceaccounts:a,system:authenticated", "FlowSchema:      service-accounts",
				"workload-low", "none of the operator's FlowSchemas matches"}},
		{[]string{"-f", samples(), "--as", "u", "--as-group", "tenants", "--verb", "get", "--resource", "pods/exec", "-n", "t-1"},
			[]string{"serves it unclassified"}},
		{[]string{"-f", proposal(), "--as", "system:controller:gc", "--verb", "get", "--resource", "leases.coordination.k8s.io", "-n", "kube-system"},
			[]string{"apiGroup=coordination.k8s.io", "is not projected (NotExpressible)", "system:controller:.*"}},
		{[]string{"-f", samples(), "--native-unmatched=operator", "--as", "alice", "--verb", "get", "--path", "/metrics"},
			[]string{"FlowSchema:      apf.non-top-backstop", "kube-apiserver applies the projected backstop non-top-backstop"}},
		// The deprecated spellings still work.
		{[]string{"-f", samples(), "--user", "u", "--groups", "tenants", "--verb", "list", "--resource", "pods", "--namespace", "t-1"},
			[]string{"FlowSchema:      apf-tenant-workloads"}},
		{[]string{"-f", samples(), "--as", "u", "--as-group", "tenants", "--verb", "create", "--resource", "pods", "-n", "t-1", "--in-process"},
			[]string{"In-process classifier", "tenant-workloads, conjunction #0 matched", "2 (mutating)", "hand 6"}},
	}
	for _, c := range cases {
		code, out, errOut := run(t, c.args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, errOut)
		}
		for _, want := range c.want {
			if !strings.Contains(out, want) {
				t.Errorf("%v: output lacks %q:\n%s", c.args, want, out)
			}
		}
		if strings.Contains(out, "In-process") != slices.Contains(c.args, "--in-process") {
			t.Errorf("%v: the in-process answer must appear only with --in-process:\n%s", c.args, out)
		}
	}
}

func TestOutputFormats(t *testing.T) {
	args := []string{"-f", samples(), "--as", "x", "--path", "/metrics", "--in-process"}
	for _, format := range []string{"json", "yaml"} {
		code, out, errOut := run(t, append(args, "-o", format)...)
		if code != 0 {
			t.Fatalf("-o %s: exit %d: %s", format, code, errOut)
		}
		var r Report
		var err error
		if format == "json" {
			err = json.Unmarshal([]byte(out), &r)
		} else {
			err = yaml.Unmarshal([]byte(out), &r)
		}
		if err != nil {
			t.Fatalf("-o %s: %v\n%s", format, err, out)
		}
		if r.KubeAPIServer.FlowSchema.Name != "global-default" || r.Mode != "offline" || r.InProcess == nil ||
			r.InProcess.FlowSchema != effective.CatchAllName || !slices.Contains(r.Request.Groups, "system:authenticated") {
			t.Errorf("-o %s: got %+v", format, r)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--resource", "pods"}, "--as is required"},
		{[]string{"--as", "a"}, "give --resource"},
		{[]string{"--as", "a", "--path", "/x", "-n", "n"}, "drop --resource, --namespace"},
		{[]string{"--as", "a", "--resource", "pods", "-o", "wide"}, `-o "wide"`},
		{[]string{"--as", "a", "--resource", "pods", "--verb", "GET"}, "lower case: --verb get"},
		{[]string{"--as", "a", "--resource", "pods", "--verb", "lst"}, "use one of get, list, watch, create, update, patch, delete, deletecollection, proxy"},
		{[]string{"--as", "a", "--path", "/x", "--verb", "list"}, "use one of get, head, post, put, patch, delete, options"},
		{[]string{"--as", "a", "--resource", "Pods"}, "lower-case plurals"},
		{[]string{"--as", "a", "--resource", "pods/"}, "RESOURCE[.GROUP][/SUBRESOURCE]"},
		{[]string{"--as", "a", "--resource", "pods", "--native-unmatched", "nobody"}, "--native-unmatched"},
		{[]string{"--as", "a", "--resource", "pods", "--operator-service-account", "x"}, "NAMESPACE/NAME"},
		{[]string{"--as", "a", "--resource", "pods", "extra"}, "unknown command"},
	}
	for _, c := range cases {
		code, _, errOut := run(t, c.args...)
		if code != cmdutil.ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, errOut, c.want)
		}
	}
}

func TestParseResource(t *testing.T) {
	for in, want := range map[string][3]string{
		"pods":                       {"", "pods", ""},
		"pods/status":                {"", "pods", "status"},
		"pods.v1":                    {"", "pods", ""},
		"deployments.apps":           {"apps", "deployments", ""},
		"deployments.v1.apps":        {"apps", "deployments", ""},
		"deployments.v1.apps/scale":  {"apps", "deployments", "scale"},
		"leases.coordination.k8s.io": {"coordination.k8s.io", "leases", ""},
		"flowschemas.v1beta3.flowcontrol.apiserver.k8s.io": {"flowcontrol.apiserver.k8s.io", "flowschemas", ""},
	} {
		var a request.Attributes
		if err := parseResource(in, &a); err != nil || [3]string{a.APIGroup, a.Resource, a.Subresource} != want {
			t.Errorf("parseResource(%q) = %q %q %q, %v; want %q", in, a.APIGroup, a.Resource, a.Subresource, err, want)
		}
	}
	for _, bad := range []string{"Pods", "pods/Status", "pods/a/b", "deployments.Apps", "/status", "pods..apps"} {
		if err := parseResource(bad, &request.Attributes{}); err == nil {
			t.Errorf("parseResource(%q) accepted", bad)
		}
	}
}

// TestRestConfigNotImpersonated checks that --as and --as-group name the request, not who reads
// the cluster, and that --context picks the kubeconfig's context as kubectl's does.
func TestRestConfigNotImpersonated(t *testing.T) {
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
	for kubeContext, host := range map[string]string{"": "https://staging.example:6443", "prod": "https://prod.example:6443"} {
		cmd, o := newCommand(genericiooptions.NewTestIOStreamsDiscard())
		args := []string{"--kubeconfig", kubeconfig, "--as", "alice", "--as-group", "g"}
		if kubeContext != "" {
			args = append(args, "--context", kubeContext)
		}
		if err := cmd.ParseFlags(args); err != nil {
			t.Fatal(err)
		}
		cfg, err := o.restConfig()
		if err != nil || cfg.Host != host || cfg.Impersonate.UserName != "" || len(cfg.Impersonate.Groups) != 0 {
			t.Errorf("--context %q: %+v, %v; want host %s and no impersonation", kubeContext, cfg, err, host)
		}
	}
}

// TestOperatorRoute checks that the offline projection includes the operator's own route for
// --operator-service-account, and that explain says the request is the operator's own.
func TestOperatorRoute(t *testing.T) {
	args := []string{"-f", samples(), "--as", "system:serviceaccount:apf-system:apf-operator", "--verb", "patch",
		"--resource", "flowschemas.flowcontrol.apiserver.k8s.io", "--name", "apf-x"}
	code, out, errOut := run(t, append(args, "--operator-service-account", "apf-system/apf-operator")...)
	if code != 0 || !strings.Contains(out, "FlowSchema:      apf.operator (") || !strings.Contains(out, "Priority level:  workload-high") ||
		!strings.Contains(out, "the operator's own route for Operator/apf-system/apf-operator") {
		t.Errorf("exit %d:\n%s%s", code, out, errOut)
	}
	if _, out, _ := run(t, args...); strings.Contains(out, "apf.operator") {
		t.Errorf("without --operator-service-account there is no route:\n%s", out)
	}
}
