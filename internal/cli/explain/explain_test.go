package explain

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apf/request"
	"github.com/apf-operator/apf-operator/internal/defaults"
)

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
		{"kubelet in kube-system", request.Attributes{User: "system:node:n1", Groups: []string{"system:nodes"}, Verb: "get",
			Resource: "pods", Namespace: "kube-system", ResourceRequest: true}, "system-high", "system-high", 1, "system:node:n1", 6},
		{"garbage collector", request.Attributes{User: "system:controller:garbage-collector", Verb: "delete",
			Resource: "pods", Namespace: "a", ResourceRequest: true}, "system-low", "system-low", 0, "", 1},
		{"kubectl user", request.Attributes{User: "alice", Groups: []string{"system:authenticated"}, Verb: "list",
			Resource: "pods", Namespace: "team-a", ResourceRequest: true}, "workload-high", "workload-high", 0, "team-a", 6},
		{"admin", request.Attributes{User: "root", Groups: []string{"system:masters"}, Verb: "create",
			Resource: "pods", Namespace: "a", ResourceRequest: true}, "system-top", "system-top", -1, "", 0},
		{"service account", request.Attributes{User: "system:serviceaccount:a:b", Verb: "get",
			Resource: "configmaps", Namespace: "a", ResourceRequest: true}, "workload-low", "workload-low", 0, "a", 6},
		// The defaults match resource requests only below system-top (DESIGN.md decision 3), so
		// a user's non-resource request falls through to the catch-all at the lowest level.
		{"non-resource request by a user", request.Attributes{User: "alice", Verb: "get", Path: "/healthz"},
			effective.CatchAllName, "workload-low", -1, "alice", 6},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := Explain(cfg, &c.attrs, "")
			if e.FlowSchema != c.schema || e.RequestPriority.Name != c.level || e.Conjunction != c.conjunction ||
				e.Distinguisher != c.distinguisher || len(e.Hand) != c.handLen {
				t.Fatalf("got schema %s #%d, priority %s, distinguisher %q, hand %v; want %s #%d, %s, %q, %d queues",
					e.FlowSchema, e.Conjunction, e.RequestPriority.Name, e.Distinguisher, e.Hand,
					c.schema, c.conjunction, c.level, c.distinguisher, c.handLen)
			}
		})
	}
}

func TestExplainBackstopWithoutObjects(t *testing.T) {
	e := Explain(effective.Compute(nil, nil), &request.Attributes{User: "bob", Verb: "get", Resource: "pods", ResourceRequest: true}, "")
	if e.FlowSchema != effective.CatchAllName || !e.Backstop || e.RequestPriority.Name != effective.BackstopLowName ||
		!e.RequestPriority.Backstop || e.Distinguisher != "bob" {
		t.Fatalf("got %+v; want the catch-all backstop at backstop workload-low, distinguished by user", e)
	}
}

func samples() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "config", "samples")
}

func TestRunOnManifests(t *testing.T) {
	var out, errOut bytes.Buffer
	code := Run([]string{"-f", samples(), "--user", "tenant-blue-ci", "--groups", "tenants", "--verb", "create",
		"--resource", "pods", "--namespace", "tenant-blue-dev"}, nil, &out, &errOut)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	for _, want := range []string{"tenant-workloads, conjunction #0 matched", `"tenant-blue-dev"`, "2 (mutating)", "level 5000", "hand 6"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestNativeClassification checks the kube-apiserver line: a projected FlowSchema, a request
// kube-apiserver's own schema takes first, and a FlowSchema that is not projected.
func TestNativeClassification(t *testing.T) {
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"-f", samples(), "--user", "u", "--groups", "tenants", "--verb", "list", "--resource", "pods", "--namespace", "t-1"},
			[]string{"kube-apiserver:", "FlowSchema apf-tenant-workloads, level apf-tenant-workloads (projected from FlowSchema/tenant-workloads)"}},
		{[]string{"-f", samples(), "--user", "root", "--groups", "system:masters,tenants", "--verb", "list", "--resource", "pods", "--namespace", "t-1"},
			[]string{"FlowSchema exempt, level exempt (kube-apiserver's own schema, ahead of the projection)"}},
		{[]string{"-f", samples(), "--user", "u", "--groups", "tenants", "--verb", "get", "--resource", "pods", "--subresource", "log", "--namespace", "t-1"},
			[]string{"kube-apiserver:", "serves it unclassified (long-running)"}},
		{[]string{"-f", proposal(), "--user", "system:controller:gc", "--verb", "get", "--resource", "leases", "--namespace", "kube-system"},
			[]string{"the FlowSchema above is not projected (NotExpressible)", "system:controller:.*"}},
		// No FlowSchema of the samples matches: by default kube-apiserver's own schema takes it.
		{[]string{"-f", samples(), "--user", "system:serviceaccount:a:b", "--groups", "system:serviceaccounts,system:authenticated",
			"--verb", "get", "--resource", "pods", "--namespace", "a"},
			[]string{"FlowSchema service-accounts, level workload-low (kube-apiserver's own schema, after the projection: no projected FlowSchema matches)",
				"with --native-unmatched=kube-apiserver the backstop non-top-backstop is not projected"}},
		{[]string{"-f", samples(), "--user", "alice", "--groups", "system:authenticated", "--verb", "get", "--path", "/metrics"},
			[]string{"FlowSchema global-default, level global-default (kube-apiserver's own schema, after the projection"}},
		{[]string{"-f", samples(), "--native-unmatched=operator", "--user", "alice", "--groups", "system:authenticated", "--verb", "get", "--path", "/metrics"},
			[]string{"FlowSchema apf.non-top-backstop, level apf-tenant-workloads (projected from FlowSchema/non-top-backstop)"}},
	}
	for _, c := range cases {
		var out, errOut bytes.Buffer
		if code := Run(c.args, nil, &out, &errOut); code != ExitOK {
			t.Fatalf("%v: exit %d: %s", c.args, code, errOut.String())
		}
		for _, want := range c.want {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%v: output lacks %q:\n%s", c.args, want, out.String())
			}
		}
	}
}

func proposal() string {
	return filepath.Join(samples(), "..", "..", "internal", "validation", "testdata", "valid", "proposal.yaml")
}

func TestRunJSON(t *testing.T) {
	var out, errOut bytes.Buffer
	code := Run([]string{"-f", samples(), "-o", "json", "--user", "x", "--path", "/metrics"}, nil, &out, &errOut)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var e Explanation
	if err := json.Unmarshal(out.Bytes(), &e); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out.String())
	}
	// The samples hold no exempt level: the backstop system-top exists, and the catch-all
	// takes x's non-resource request at the lowest level, the sample's tenant-workloads.
	if e.FlowSchema != effective.CatchAllName || e.RequestPriority.Name != "tenant-workloads" || e.Width != 1 {
		t.Fatalf("got %+v", e)
	}
}

func TestRunUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--resource", "pods"}, // no user
		{"--user", "a"},        // neither resource nor path
		{"--user", "a", "--path", "/x", "--namespace", "n"}, // both kinds
		{"--user", "a", "--resource", "pods", "-o", "yaml"},
		{"--user", "a", "--resource", "pods", "--native-unmatched", "nobody"},
	} {
		var out, errOut bytes.Buffer
		if code := Run(args, nil, &out, &errOut); code != ExitUsage {
			t.Errorf("Run(%v) = %d, want %d (usage error)", args, code, ExitUsage)
		}
	}
}
