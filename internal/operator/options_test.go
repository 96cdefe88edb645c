package operator

import (
	"strings"
	"testing"
	"time"
)

// TestValidate: production's options are valid, and each wrong value is refused with the
// flag's name and the accepted values.
func TestValidate(t *testing.T) {
	valid := NewOptions()
	valid.Namespace = "apf-system"
	if err := valid.Validate(); err != nil {
		t.Fatalf("production's options with a namespace: %v", err)
	}
	cases := []struct {
		name   string
		change func(*Options)
		want   string
	}{
		{"enforcement", func(o *Options) { o.Enforcement = "kernel" }, `--enforcement="kernel": use "native" or "none"`},
		{"seat loss", func(o *Options) { o.NativeMaxSeatLossPercent = 91 }, "--native-max-seat-loss-percent=91: use 0 to 90"},
		{"negative seat loss", func(o *Options) { o.NativeMaxSeatLossPercent = -1 }, "--native-max-seat-loss-percent=-1: use 0 to 90"},
		{"autopilot", func(o *Options) { o.AutopilotInterval = 10 * time.Second }, "--autopilot-interval=10s: use at least 15s"},
		{"metrics period", func(o *Options) { o.NativeMetricsPeriod = 0 }, "--native-metrics-period=0s: use at least 1s"},
		{"unmatched", func(o *Options) { o.NativeUnmatched = "everyone" }, `--native-unmatched: "everyone" is not one of "kube-apiserver", "operator"`},
		{"event replicas", func(o *Options) { o.EventRateLimit.Replicas = "leader" }, `--event-rate-limit-replicas="leader": use "divide" or "perReplica"`},
		{"lease", func(o *Options) { o.LeaderElection.LeaseDuration = o.LeaderElection.RenewDeadline },
			"--leader-election-lease-duration (10s) > --leader-election-renew-deadline (10s)"},
		{"renew", func(o *Options) { o.LeaderElection.RenewDeadline = 2 * time.Second },
			"> 1.2 x --leader-election-retry-period (2s) > 0"},
		{"namespace", func(o *Options) { o.Namespace = "" }, "--namespace (or $POD_NAMESPACE) is required"},
		{"client CA", func(o *Options) { o.Webhooks.ClientCAFile = "/nonexistent/ca.crt" }, `--webhook-client-ca-file="/nonexistent/ca.crt"`},
	}
	for _, c := range cases {
		o := valid
		c.change(&o)
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
	// Without leader election and certificate rotation the namespace is optional (`make run`).
	local := NewOptions()
	local.LeaderElection.Enabled, local.Webhooks.CertRotation = false, false
	if err := local.Validate(); err != nil {
		t.Errorf("no leader election, no rotation, no namespace: %v", err)
	}
}

func TestOperatorUser(t *testing.T) {
	o := &Options{Namespace: "apf-system", ServiceAccount: "apf-operator"}
	if got := o.operatorUser(); got != "system:serviceaccount:apf-system:apf-operator" {
		t.Fatalf("operatorUser = %q", got)
	}
	if got := (&Options{Namespace: "x"}).operatorUser(); got != "" {
		t.Fatalf("operatorUser without a service account = %q; want empty", got)
	}
	if sa := o.operatorAccount(); sa == nil || sa.Namespace != "apf-system" || sa.Name != "apf-operator" {
		t.Fatalf("operatorAccount = %+v: the projection's route needs it", sa)
	}
	if sa := (&Options{ServiceAccount: "x"}).operatorAccount(); sa != nil {
		t.Fatalf("operatorAccount without a namespace = %+v; want none (no route)", sa)
	}
}

// TestWebhookOptionsExemptTheOperator: the operator's own user is added to the exempt users
// without changing the caller's list, and enforcement native turns on the native warnings and
// the share budget.
func TestWebhookOptionsExemptTheOperator(t *testing.T) {
	o := NewOptions()
	o.Namespace, o.ServiceAccount, o.ExemptUsers = "apf-system", "apf-operator", make([]string, 1, 4)
	o.ExemptUsers[0] = "alice"
	w := o.webhookOptions(nil)
	if len(w.ExemptUsers) != 2 || w.ExemptUsers[1] != "system:serviceaccount:apf-system:apf-operator" {
		t.Errorf("exempt users %v, want alice and the operator", w.ExemptUsers)
	}
	if len(o.ExemptUsers) != 1 || o.ExemptUsers[:2][1] != "" {
		t.Errorf("the options' list was changed: %v", o.ExemptUsers[:2])
	}
	if !w.NativeWarnings || !w.NativeShareBudget || w.NativeMaxSeatLossPercent != int32(o.NativeMaxSeatLossPercent) {
		t.Errorf("enforcement native: %+v, want warnings and the share budget", w)
	}
}
