package operator

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync/atomic"

	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/apf-operator/apf-operator/controllers"
	"github.com/apf-operator/apf-operator/internal/eventratelimit"
	"github.com/apf-operator/apf-operator/webhooks"
)

// setupWebhooks registers the validating webhooks. With in-process certificate rotation they
// are registered only once the rotator has written the certificate (certs.go): registering
// them adds the webhook server to the manager, and the server cannot start without its
// certificate files. Readiness fails until the webhook server serves.
func setupWebhooks(mgr manager.Manager, o *Options, events *eventratelimit.Engine) error {
	opts := o.webhookOptions(events)
	registered := &atomic.Bool{}
	if err := mgr.AddReadyzCheck("webhook", webhookReady(mgr, registered)); err != nil {
		return fmt.Errorf("adding the webhook readiness check: %w", err)
	}
	if !o.Webhooks.CertRotation {
		registered.Store(true)
		return webhooks.SetupWithManager(mgr, opts)
	}
	certsReady := make(chan struct{})
	if err := addCertRotator(mgr, o, certsReady); err != nil {
		return err
	}
	return mgr.Add(&webhookRegistrar{mgr: mgr, opts: opts, certsReady: certsReady, registered: registered})
}

// webhookOptions are the webhooks' options for o, with the events webhook's engine (nil when
// it is off).
func (o *Options) webhookOptions(events *eventratelimit.Engine) webhooks.Options {
	native := o.Enforcement == controllers.EnforcementNative
	opts := webhooks.Options{
		ExemptGroups: o.ExemptGroups, ExemptUsers: slices.Clone(o.ExemptUsers),
		NativeWarnings: native, NativeShareBudget: native, NativeMaxSeatLossPercent: int32(o.NativeMaxSeatLossPercent),
		EventRateLimit: events,
	}
	if u := o.operatorUser(); u != "" {
		opts.ExemptUsers = append(opts.ExemptUsers, u)
	}
	return opts
}

// webhookReady fails until the webhooks are registered, then reports whether their server
// accepts TLS connections.
func webhookReady(mgr manager.Manager, registered *atomic.Bool) healthz.Checker {
	return func(req *http.Request) error {
		if !registered.Load() {
			return errors.New("webhooks not registered yet: waiting for the webhook certificate")
		}
		return mgr.GetWebhookServer().StartedChecker()(req)
	}
}
