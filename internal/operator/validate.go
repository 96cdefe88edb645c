package operator

import (
	"errors"
	"fmt"
	"time"

	"k8s.io/client-go/tools/leaderelection"

	"github.com/apf-operator/apf-operator/controllers"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/internal/native/budget"
)

// MinNativeMetricsPeriod is the shortest --native-metrics-period.
const MinNativeMetricsPeriod = time.Second

// Validate checks the options and returns the first problem, as `apf-operator manager`
// reports it: the error names the flag that sets the value and the values it accepts. It
// reads Webhooks.ClientCAFile, so that a wrong file stops the operator at start rather than
// failing every handshake later.
func (o *Options) Validate() error {
	for _, check := range []func() error{
		o.validateEnforcement,
		o.validateEventRateLimit,
		func() error { return validateClientCAFile(o.Webhooks.ClientCAFile) },
		o.validateLeaderElection,
		o.validateNamespace,
	} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

func (o *Options) validateEnforcement() error {
	if o.Enforcement != controllers.EnforcementNative && o.Enforcement != controllers.EnforcementNone {
		return fmt.Errorf("--enforcement=%q: use %q or %q", o.Enforcement, controllers.EnforcementNative, controllers.EnforcementNone)
	}
	if o.NativeMaxSeatLossPercent < 0 || o.NativeMaxSeatLossPercent > budget.MaxMaxLossPercent {
		return fmt.Errorf("--native-max-seat-loss-percent=%d: use 0 to %d", o.NativeMaxSeatLossPercent, budget.MaxMaxLossPercent)
	}
	if o.AutopilotInterval < controllers.MinAutopilotInterval {
		return fmt.Errorf("--autopilot-interval=%s: use at least %s (each step reads kube-apiserver's /metrics; the demand of a shorter window is noise)",
			o.AutopilotInterval, controllers.MinAutopilotInterval)
	}
	if o.NativeMetricsPeriod < MinNativeMetricsPeriod {
		return fmt.Errorf("--native-metrics-period=%s: use at least %s (each read fetches all of kube-apiserver's metrics)",
			o.NativeMetricsPeriod, MinNativeMetricsPeriod)
	}
	if _, err := native.ParseUnmatched(string(o.NativeUnmatched)); err != nil {
		return fmt.Errorf("--native-unmatched: %w", err)
	}
	return nil
}

func (o *Options) validateEventRateLimit() error {
	r := o.EventRateLimit.Replicas
	if r != controllers.EventRateLimitDivide && r != controllers.EventRateLimitPerReplica {
		return fmt.Errorf("--event-rate-limit-replicas=%q: use %q or %q", r,
			controllers.EventRateLimitDivide, controllers.EventRateLimitPerReplica)
	}
	return nil
}

// validateLeaderElection applies client-go's own rule: the leader must get a few jittered
// retries before its deadline.
func (o *Options) validateLeaderElection() error {
	le := o.LeaderElection
	minRenew := time.Duration(leaderelection.JitterFactor * float64(le.RetryPeriod))
	if le.Enabled && (le.LeaseDuration <= le.RenewDeadline || le.RenewDeadline <= minRenew || le.RetryPeriod <= 0) {
		return fmt.Errorf("leader election needs --leader-election-lease-duration (%s) > --leader-election-renew-deadline (%s) > %.1f x --leader-election-retry-period (%s) > 0",
			le.LeaseDuration, le.RenewDeadline, leaderelection.JitterFactor, le.RetryPeriod)
	}
	return nil
}

func (o *Options) validateNamespace() error {
	rotating := o.Webhooks.Enabled && o.Webhooks.CertRotation
	if (rotating || o.LeaderElection.Enabled) && o.Namespace == "" {
		return errors.New("--namespace (or $POD_NAMESPACE) is required for leader election and certificate rotation")
	}
	return nil
}
