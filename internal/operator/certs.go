package operator

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/apf-operator/apf-operator/webhooks"
)

// addCertRotator adds cert-controller's rotator, which makes the webhook certificate (Secret
// Webhooks.SecretName), keeps the caBundle of Webhooks.ConfigName current, writes the
// certificate to Webhooks.CertDir and closes certsReady once it has.
func addCertRotator(mgr manager.Manager, o *Options, certsReady chan struct{}) error {
	svc, ns := o.Webhooks.ServiceName, o.Namespace
	err := rotator.AddRotator(mgr, &rotator.CertRotator{
		SecretKey:      types.NamespacedName{Namespace: ns, Name: o.Webhooks.SecretName},
		CertDir:        o.Webhooks.CertDir,
		CAName:         "apf-operator-ca",
		CAOrganization: "apf-operator",
		DNSName:        fmt.Sprintf("%s.%s.svc", svc, ns),
		ExtraDNSNames: []string{
			svc, fmt.Sprintf("%s.%s", svc, ns), fmt.Sprintf("%s.%s.svc.cluster.local", svc, ns),
		},
		IsReady:               certsReady,
		Webhooks:              []rotator.WebhookInfo{{Name: o.Webhooks.ConfigName, Type: rotator.Validating}},
		RequireLeaderElection: false, // every replica serves webhooks and needs the certificate
		FieldOwner:            "apf-operator",
	})
	if err != nil {
		return fmt.Errorf("setting up certificate rotation: %w", err)
	}
	return nil
}

// webhookRegistrar registers the webhooks once the certificate rotator has written the
// certificate; a registration error stops the manager.
type webhookRegistrar struct {
	mgr        manager.Manager
	opts       webhooks.Options
	certsReady <-chan struct{}
	registered *atomic.Bool
}

// Start waits for the certificate, registers the webhooks and waits for the end.
func (w *webhookRegistrar) Start(ctx context.Context) error {
	select {
	case <-w.certsReady:
	case <-ctx.Done():
		return nil
	}
	if err := webhooks.SetupWithManager(w.mgr, w.opts); err != nil {
		return fmt.Errorf("setting up the webhooks: %w", err)
	}
	w.registered.Store(true)
	ctrl.Log.WithName("setup").Info("Webhooks registered with the rotated certificate")
	<-ctx.Done()
	return nil
}

// NeedLeaderElection is false: every replica serves the webhooks.
func (w *webhookRegistrar) NeedLeaderElection() bool { return false }
