package main

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

func TestRunDispatchesSubcommands(t *testing.T) {
	cases := []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"help"}, 0, "Available Commands:"},
		{[]string{}, 0, "apf-operator manager"}, // the bare binary prints help
		{[]string{"version"}, 0, "apf-operator "},
		{[]string{"--help"}, 0, "prune-native"}, // the image test runs `apf-operator --help`
		{[]string{"-h"}, 0, "validate"},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"validate"}, 2, ""}, // validate without files is a usage error
		{[]string{"explain", "--resource", "pods"}, 2, "--as is required"},
		{[]string{"import"}, 2, "nothing to import"},
		{[]string{"manager", "--no-such-flag"}, 2, "unknown flag: --no-such-flag"},
		{[]string{"manager", "extra"}, 2, `unknown command "extra" for "apf-operator manager"`},
		{[]string{"version", "-o", "xml"}, 2, `--output="xml": use json or yaml`},
		{[]string{"import", "--from-cluster", "-o", "wide"}, 2, `output format "wide"`},
		{[]string{"prune-native", "--kubeconfig", "/nonexistent"}, 1, "loading the kubeconfig"},
		{[]string{"manager", "--zap-log-level=bogus"}, 2, `invalid argument "bogus" for "--zap-log-level" flag`},
		// zap's Go flags through pflag; the manager then fails to load the kubeconfig and logs it
		// (to the process's standard error: the logger's, not the streams).
		{[]string{"manager", "--leader-elect=false", "--enable-webhooks=false", "--zap-log-level=debug", "--zap-devel=false",
			"--kubeconfig", "/nonexistent", "--metrics-bind-address", "0", "--health-probe-bind-address=0"}, 1, ""},
		{[]string{"manager", "--leader-elect", "--namespace="}, 2, "--namespace (or $POD_NAMESPACE) is required"},
		{[]string{"manager", "--help"}, 0, "-exempt-groups"},
		{[]string{"manager", "--namespace=x", "--leader-election-lease-duration=5s", "--leader-election-renew-deadline=5s"}, 2,
			"--leader-election-lease-duration (5s) > --leader-election-renew-deadline (5s)"},
		{[]string{"manager", "--namespace=x", "--leader-election-renew-deadline=2s", "--leader-election-retry-period=2s"}, 2,
			"> 1.2 x --leader-election-retry-period (2s) > 0"},
		{[]string{"prune-native", "--help"}, 0, "prune-native"},
		{[]string{"manager", "--leader-elect=false", "--enforcement=kernel"}, 2, `--enforcement="kernel": use "native" or "none"`},
		{[]string{"manager", "--leader-elect=false", "--native-max-seat-loss-percent=91"}, 2, "--native-max-seat-loss-percent=91: use 0 to 90"},
		{[]string{"manager", "--leader-elect=false", "--autopilot-interval=10s"}, 2, "--autopilot-interval=10s: use at least 15s"},
		{[]string{"manager", "--leader-elect=false", "--native-metrics-period=500ms"}, 2, "--native-metrics-period=500ms: use at least 1s"},
		{[]string{"manager", "--leader-elect=false", "--native-unmatched=everyone"}, 2,
			`--native-unmatched: "everyone" is not one of "kube-apiserver", "operator"`},
		{[]string{"manager", "--leader-elect=false", "--event-rate-limit-replicas=leader"}, 2, `--event-rate-limit-replicas="leader": use "divide" or "perReplica"`},
		{[]string{"top", "-o", "wide"}, 2, `--output "wide": use json or yaml`},
	}
	for _, c := range cases {
		t.Setenv("POD_NAMESPACE", "")
		var out, errOut bytes.Buffer
		code := dispatch("apf-operator", c.args, genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
		if code != c.code || !strings.Contains(out.String()+errOut.String(), c.out) {
			t.Errorf("run(%v) = %d, output %q; want %d and output containing %q", c.args, code, out.String()+errOut.String(), c.code, c.out)
		}
	}
}

func TestSplitListKeepsExplicitEmpty(t *testing.T) {
	if got := splitList(""); got == nil || len(got) != 0 {
		t.Fatalf(`splitList("") = %#v; want an empty, non-nil list ("no group")`, got)
	}
	if got := splitList(" a, ,b "); len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Fatalf("splitList = %v; want [a b]", got)
	}
}
