package main

import (
	"fmt"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/apf-operator/apf-operator/controllers"
	"github.com/apf-operator/apf-operator/internal/eventratelimit"
)

// eventRateLimitFlags are the manager's EventRateLimit settings.
type eventRateLimitFlags struct {
	enabled    bool
	replicas   string
	deployment string
}

func (e *eventRateLimitFlags) bind(fs *pflag.FlagSet) {
	// Off by default: a webhook on every event creation that no EventRateLimit uses only adds
	// a call (and, with a hung operator, up to its timeout) to every event write.
	fs.BoolVar(&e.enabled, "enable-event-rate-limit", false,
		"Serve the EventRateLimit webhook on event creation (needs --enable-webhooks, and the webhook registered in the ValidatingWebhookConfiguration); false leaves events alone.")
	fs.StringVar(&e.replicas, "event-rate-limit-replicas", controllers.EventRateLimitDivide,
		`How replicas share the EventRateLimit limits: "divide" divides qps and burst by the ready replicas of --event-rate-limit-deployment; "perReplica" gives each replica the full limits (cluster-wide up to replicas × qps).`)
	fs.StringVar(&e.deployment, "event-rate-limit-deployment", "",
		`The operator's Deployment in --namespace, whose ready replicas "divide" counts; empty: one replica is assumed.`)
}

func (e *eventRateLimitFlags) check() error {
	if e.replicas != controllers.EventRateLimitDivide && e.replicas != controllers.EventRateLimitPerReplica {
		return fmt.Errorf("--event-rate-limit-replicas=%q: use %q or %q", e.replicas,
			controllers.EventRateLimitDivide, controllers.EventRateLimitPerReplica)
	}
	return nil
}

// eventRateLimitEngine returns the engine of the events webhook, or nil when it is off.
func (f *managerFlags) eventRateLimitEngine() (*eventratelimit.Engine, error) {
	if !f.enableWebhooks || !f.eventRateLimit.enabled {
		return nil, nil
	}
	m, err := eventratelimit.NewMetrics(metrics.Registry)
	if err != nil {
		return nil, fmt.Errorf("registering the EventRateLimit metrics: %w", err)
	}
	return eventratelimit.New(nil, m), nil
}

// eventRateLimitDeployment returns the Deployment whose ready replicas divide the limits, or
// the zero name when the limits are not divided.
func (f *managerFlags) eventRateLimitDeployment(engine *eventratelimit.Engine) types.NamespacedName {
	if engine == nil || f.eventRateLimit.replicas != controllers.EventRateLimitDivide || f.eventRateLimit.deployment == "" {
		return types.NamespacedName{}
	}
	return types.NamespacedName{Namespace: f.namespace, Name: f.eventRateLimit.deployment}
}
