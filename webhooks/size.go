package webhooks

import (
	"context"
	"fmt"
	"net/http"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

// FlowSchemaPath is the FlowSchema webhook's path, as the kubebuilder marker in flowschema.go
// and the chart name it.
const FlowSchemaPath = "/validate-flowcontrol-apf-operator-io-v1alpha1-flowschema"

// MaxFlowSchemaBytes bounds the FlowSchema objects the webhook decodes. kube-apiserver sends
// bodies of up to 3 MiB, and decoding a FlowSchema of 2.9 MiB made of short set values takes
// about 75 ms on two cores before any validation (docs/benchmarks.md), past the 50 ms an
// admission may take. One of 1 MiB is still far larger than any native FlowSchema the operator
// projects (at most about 540 KiB, internal/native) and below etcd's default 1.5 MiB request
// limit, which would refuse a larger object anyway.
const MaxFlowSchemaBytes = 1 << 20

// flowSchemaWebhook is the FlowSchema webhook: v behind a size check that refuses an oversized
// object before decoding it.
func flowSchemaWebhook(scheme *runtime.Scheme, v *FlowSchemaValidator) *admission.Webhook {
	w := admission.WithValidator[*v1alpha1.FlowSchema](scheme, v)
	w.Handler = sizeLimit{limit: MaxFlowSchemaBytes, kind: "FlowSchema", next: w.Handler}
	return w
}

// sizeLimit denies a request whose object or oldObject is larger than limit bytes, undecoded;
// it passes every other request to next.
type sizeLimit struct {
	limit int
	kind  string
	next  admission.Handler
}

// Handle implements admission.Handler.
func (s sizeLimit) Handle(ctx context.Context, req admission.Request) admission.Response {
	if n := len(req.Object.Raw); n > s.limit {
		return admission.Errored(http.StatusRequestEntityTooLarge, fmt.Errorf(
			"%s %q is %d bytes; this webhook admits at most %d (1 MiB): split its match into several %ss "+
				"(a native FlowSchema, which kube-apiserver stores in etcd, must stay far smaller)",
			s.kind, req.Name, n, s.limit, s.kind))
	}
	if n := len(req.OldObject.Raw); n > s.limit {
		// Stored while no webhook checked it (an outage, or before the chart's webhook existed).
		return admission.Errored(http.StatusRequestEntityTooLarge, fmt.Errorf(
			"the stored %s %q (oldObject) is %d bytes; this webhook decodes at most %d (1 MiB): delete it and "+
				"create several smaller %ss instead of updating it", s.kind, req.Name, n, s.limit, s.kind))
	}
	return s.next.Handle(ctx, req)
}
