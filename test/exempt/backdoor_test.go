package exempt

import (
	"context"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/test/harness"
)

// TestSystemTopBackDoorWithWebhook replays issue 33's back door with the operator and its
// webhook running: (1) an administrator replaces system-top with another level-0
// RequestPriority; (2) a tenant without configure-exempt creates a FlowSchema referring to
// system-top, which kube-apiserver's policy now refuses (before: admitted with a warning);
// (3) the administrator deletes the level-0 object and the operator re-creates system-top;
// (4) the tenant's requests are not on the exempt level. Positive control: boss, who has the
// verb, sends vip's requests to system-top with the record, and they are exempt.
func TestSystemTopBackDoorWithWebhook(t *testing.T) {
	s, ctx := suite, context.Background()
	startOperator(t, s)
	systemTop := levelZero(flowv1.SystemTopName)
	waitProjected(t, s, systemTop, flowv1.ReasonProjected) // the defaults created it

	// (1) Levels are unique: delete system-top, then create admin-top before the defaults
	// re-create system-top (which they do while no level-0 object exists).
	adminTop := levelZero("admin-top")
	harness.Eventually(t, 2*time.Minute, "admin-top replacing system-top", func(ctx context.Context) error {
		if err := s.Client.Delete(ctx, levelZero(flowv1.SystemTopName)); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		return s.Client.Create(ctx, adminTop.DeepCopy())
	})
	// (2)
	tenantFS := flowSchema("tenant-top", flowv1.SystemTopName, tenant, false)
	refused(t, "tenant's FlowSchema referring to the missing system-top", asUser(s, tenant).Create(ctx, tenantFS))
	refused(t, "tenant's FlowSchema with the record", asUser(s, tenant).Create(ctx, flowSchema("tenant-recorded", "admin-top", tenant, true)))
	// (3)
	if err := s.Client.Delete(ctx, adminTop); err != nil {
		t.Fatal(err)
	}
	waitProjected(t, s, levelZero(flowv1.SystemTopName), flowv1.ReasonProjected)
	// Positive control, then (4): both read once boss's FlowSchema is projected.
	bossFS := flowSchema("boss-top", flowv1.SystemTopName, vip, true)
	create(t, asUser(s, boss), bossFS)
	t.Cleanup(func() { _ = s.Client.Delete(context.Background(), bossFS) })
	waitProjected(t, s, bossFS, flowv1.ReasonProjected)
	wantServed(t, s, vip, true)
	wantServed(t, s, tenant, false)
}

// TestStoredWithoutWebhook: the objects are written while no webhook runs (the CRDs are there,
// the webhook configuration is not: Helm's install window, crds.keep after an uninstall, GitOps
// with CRDs ahead of the chart), then the operator starts. kube-apiserver's policy still
// refuses the tenant's level-0 RequestPriority, reference to system-top and record; the
// tenant's FlowSchema referring to the administrator's level-0 RequestPriority is stored
// unchecked, and the projector does not send it to the exempt level (ExemptNotAuthorized),
// while boss's recorded FlowSchema to the same level is exempt.
func TestStoredWithoutWebhook(t *testing.T) {
	s, ctx := suite, context.Background()
	removeWebhooks(t)
	clean(t)
	tenantClient := asUser(s, tenant)

	create(t, s.Client, levelZero("admin-top"))
	refused(t, "tenant's level-0 RequestPriority", tenantClient.Create(ctx, levelZero("tenant-zero")))
	refused(t, "tenant's FlowSchema referring to system-top", tenantClient.Create(ctx, flowSchema("tenant-top", flowv1.SystemTopName, tenant, false)))
	refused(t, "tenant's FlowSchema with the record", tenantClient.Create(ctx, flowSchema("tenant-recorded", "admin-top", tenant, true)))
	unchecked := flowSchema("tenant-unchecked", "admin-top", tenant, false)
	create(t, tenantClient, unchecked) // no webhook: nothing resolves its reference at admission
	bossFS := flowSchema("boss-top", "admin-top", vip, true)
	create(t, asUser(s, boss), bossFS)
	recorded := unchecked.DeepCopy()
	recorded.Annotations = map[string]string{flowv1.AnnotationExemptAuthorized: "true"}
	refused(t, "tenant adding the record to its FlowSchema", tenantClient.Update(ctx, recorded))

	startOperator(t, s)
	waitProjected(t, s, bossFS, flowv1.ReasonProjected)
	waitProjected(t, s, unchecked, flowv1.ReasonExemptNotAuthorized)
	wantServed(t, s, vip, true)
	wantServed(t, s, tenant, false)
}

// create creates obj with c, failing t on an error.
func create(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Create(context.Background(), obj); err != nil {
		t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

// removeWebhooks deletes the validating webhook configurations: kube-apiserver calls no
// webhook from now on.
func removeWebhooks(t *testing.T) {
	t.Helper()
	if err := suite.Client.DeleteAllOf(context.Background(), &admissionregistrationv1.ValidatingWebhookConfiguration{}); err != nil {
		t.Fatal(err)
	}
}

// clean deletes every RequestPriority and FlowSchema an earlier test left.
func clean(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	for _, obj := range []client.Object{&flowv1.FlowSchema{}, &flowv1.RequestPriority{}} {
		if err := suite.Client.DeleteAllOf(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
}
