package operator

import (
	"fmt"

	"k8s.io/apimachinery/pkg/types"

	"github.com/apf-operator/apf-operator/controllers"
	"github.com/apf-operator/apf-operator/internal/eventratelimit"
)

// eventRateLimitEngine returns the engine of the events webhook, or nil when it is off. It is
// off by default: a webhook on every event creation that no EventRateLimit uses only adds a
// call (and, with a hung operator, up to its timeout) to every event write.
func (o *Options) eventRateLimitEngine() (*eventratelimit.Engine, error) {
	if o.Testing.EventRateLimitEngine != nil {
		return o.Testing.EventRateLimitEngine, nil
	}
	if !o.Webhooks.Enabled || !o.EventRateLimit.Enabled {
		return nil, nil
	}
	m, err := eventratelimit.NewMetrics(o.registerer())
	if err != nil {
		return nil, fmt.Errorf("registering the EventRateLimit metrics: %w", err)
	}
	return eventratelimit.New(nil, m), nil
}

// eventRateLimitDeployment returns the Deployment whose ready replicas divide the limits, or
// the zero name when the limits are not divided.
func (o *Options) eventRateLimitDeployment(engine *eventratelimit.Engine) types.NamespacedName {
	e := o.EventRateLimit
	if engine == nil || e.Replicas != controllers.EventRateLimitDivide || e.Deployment == "" {
		return types.NamespacedName{}
	}
	return types.NamespacedName{Namespace: o.Namespace, Name: e.Deployment}
}
