package operator

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
)

// TestEventRateLimitOffByDefault: with production's options the operator makes no events
// engine, so it neither serves the events webhook nor enforces EventRateLimit objects; with
// EventRateLimit.Enabled (and the webhooks) it does, and with the webhooks off it does not.
func TestEventRateLimitOffByDefault(t *testing.T) {
	o := NewOptions()
	o.Testing.Registerer = prometheus.NewRegistry()
	if e, err := o.eventRateLimitEngine(); e != nil || err != nil {
		t.Fatalf("production's options: engine %v, error %v; want none", e, err)
	}
	o.EventRateLimit.Enabled = true
	e, err := o.eventRateLimitEngine()
	if e == nil || err != nil {
		t.Fatalf("EventRateLimit.Enabled: engine %v, error %v; want one", e, err)
	}
	o.Webhooks.Enabled = false
	if e, err := o.eventRateLimitEngine(); e != nil || err != nil {
		t.Fatalf("EventRateLimit.Enabled without webhooks: engine %v, error %v; want none", e, err)
	}
}

// TestEventRateLimitDeployment: the limits are divided by the ready replicas of the named
// Deployment in the operator's namespace only with "divide" and an engine.
func TestEventRateLimitDeployment(t *testing.T) {
	o := NewOptions()
	o.Testing.Registerer = prometheus.NewRegistry()
	o.Namespace, o.EventRateLimit.Enabled, o.EventRateLimit.Deployment = "apf-system", true, "apf-operator"
	engine, err := o.eventRateLimitEngine()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := o.eventRateLimitDeployment(engine), (types.NamespacedName{Namespace: "apf-system", Name: "apf-operator"}); got != want {
		t.Errorf("divide: %v, want %v", got, want)
	}
	if got := o.eventRateLimitDeployment(nil); got != (types.NamespacedName{}) {
		t.Errorf("without an engine: %v, want none", got)
	}
	o.EventRateLimit.Replicas = "perReplica"
	if got := o.eventRateLimitDeployment(engine); got != (types.NamespacedName{}) {
		t.Errorf("perReplica: %v, want none", got)
	}
}
