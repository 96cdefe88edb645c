package main

import (
	"reflect"
	"testing"
	"time"

	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/internal/operator"
)

// TestManagerFlagDefaultsAreProductionOptions: the command's defaults are operator.NewOptions',
// the options the tests start from, so that the tests run the operator the chart runs.
func TestManagerFlagDefaultsAreProductionOptions(t *testing.T) {
	t.Setenv("POD_NAMESPACE", "apf-system")
	t.Setenv("SERVICE_ACCOUNT_NAME", "apf-operator")
	f, err := parseManagerFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := operator.NewOptions()
	want.Namespace, want.ServiceAccount = "apf-system", "apf-operator"
	if !reflect.DeepEqual(f.options, want) {
		t.Errorf("defaults:\n%+v\nwant operator.NewOptions():\n%+v", f.options, want)
	}
}

// TestManagerFlagsFillOptions: each flag sets its field of operator.Options.
func TestManagerFlagsFillOptions(t *testing.T) {
	f, err := parseManagerFlags([]string{
		"--leader-elect=false", "--leader-election-id=lease", "--leader-election-lease-duration=30s",
		"--leader-election-renew-deadline=20s", "--leader-election-retry-period=3s",
		"--metrics-bind-address=:1", "--health-probe-bind-address=:2", "--pprof-bind-address=:3",
		"--enable-webhooks=false", "--webhook-port=4", "--webhook-cert-dir=/certs", "--cert-rotation=false",
		"--webhook-secret-name=secret", "--webhook-service-name=svc", "--webhook-config-name=vwc",
		"--manage-defaults=false", "--enforcement=none", "--native-max-seat-loss-percent=20",
		"--native-unmatched=operator", "--native-metrics-period=5s", "--defaults-resync=1m", "--autopilot-interval=30s",
		"--exempt-groups=a, b", "--exempt-users=", "--namespace=ns", "--service-account=sa",
		"--enable-event-rate-limit", "--event-rate-limit-replicas=perReplica", "--event-rate-limit-deployment=dep",
		"--kubeconfig=/kc",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := operator.Options{
		LeaderElection: operator.LeaderElectionOptions{ID: "lease", LeaseDuration: 30 * time.Second,
			RenewDeadline: 20 * time.Second, RetryPeriod: 3 * time.Second},
		MetricsBindAddress: ":1", HealthProbeBindAddress: ":2", PprofBindAddress: ":3",
		Webhooks: operator.WebhookOptions{Port: 4, CertDir: "/certs", SecretName: "secret", ServiceName: "svc",
			ConfigName: "vwc"},
		Enforcement: "none", NativeMaxSeatLossPercent: 20, NativeUnmatched: native.UnmatchedOperator,
		NativeMetricsPeriod: 5 * time.Second, DefaultsResync: time.Minute, AutopilotInterval: 30 * time.Second,
		ExemptGroups: []string{"a", "b"}, ExemptUsers: []string{}, Namespace: "ns", ServiceAccount: "sa",
		EventRateLimit: operator.EventRateLimitOptions{Enabled: true, Replicas: "perReplica", Deployment: "dep"},
	}
	if !reflect.DeepEqual(f.options, want) {
		t.Errorf("options:\n%+v\nwant:\n%+v", f.options, want)
	}
	if f.kubeconfig != "/kc" {
		t.Errorf("kubeconfig %q, want /kc", f.kubeconfig)
	}
}
