package webhooks

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/eventratelimit"
)

// EventsPath is where the EventRateLimit webhook is served.
const EventsPath = "/validate-events"

// failurePolicy Ignore: events must never block a cluster because the operator is down; the
// short timeout (1 s, the minimum) bounds what a slow or hung operator adds to every event
// creation. The chart and config/default add a namespaceSelector that leaves kube-system out.
// +kubebuilder:webhook:path=/validate-events,mutating=false,failurePolicy=ignore,sideEffects=None,groups="";events.k8s.io,resources=events,verbs=create,versions=v1,name=vevents.flowcontrol.apf-operator.io,admissionReviewVersions=v1,timeoutSeconds=1

// EventRateLimitHandler admits event creations (core/v1 and events.k8s.io/v1) that fit the
// enforced EventRateLimit objects and rejects the others with HTTP 429 and Retry-After.
type EventRateLimitHandler struct {
	// Engine holds the buckets; its configuration comes from the EventRateLimit objects.
	Engine *eventratelimit.Engine
}

var _ admission.Handler = &EventRateLimitHandler{}

// Handle decides one event creation. The user comes from the admission request (what
// kube-apiserver authenticated), never from the event or a header; the event is decoded only
// when a SourceAndObject limit needs it. A review that is not an attributable event creation
// (not a CREATE of events, a dry run, no namespace or no user: from a caller other than
// kube-apiserver, or a misregistered webhook) is admitted without charging any bucket.
func (h *EventRateLimitHandler) Handle(ctx context.Context, req admission.Request) admission.Response {
	a := eventratelimit.Attributes{Namespace: req.Namespace, User: req.UserInfo.Username}
	if reason := skipReason(&req, &a); reason != "" {
		h.Engine.Skip(reason)
		logf.FromContext(ctx).V(1).Info("Admitted without charging any bucket", "reason", reason)
		return admission.Allowed("")
	}
	if h.Engine.Uses(v1alpha1.EventRateLimitSourceAndObject) {
		key, err := sourceAndObjectKey(req.Object.Raw)
		if err != nil {
			// kube-apiserver decoded this object already; a failure here is ours, and an event
			// must not be lost to it.
			return admission.Allowed("").WithWarnings("EventRateLimit could not read the event: " + err.Error())
		}
		a.SourceAndObject = key
	}
	d := h.Engine.Admit(&a)
	if d.Allowed {
		return admission.Allowed("")
	}
	return tooManyRequests(d)
}

// skipReason returns why req must charge no bucket, or "" when it is an attributable event
// creation.
func skipReason(req *admission.Request, a *eventratelimit.Attributes) eventratelimit.SkipReason {
	r := req.Resource
	if req.Operation != admissionv1.Create || r.Resource != "events" || req.SubResource != "" ||
		(r.Group != "" && r.Group != "events.k8s.io") {
		return eventratelimit.SkipNotEventCreate
	}
	if req.DryRun != nil && *req.DryRun {
		return eventratelimit.SkipDryRun // a dry run creates no event and takes no token
	}
	return a.Unattributed()
}

// tooManyRequests denies with code 429 and details.retryAfterSeconds, which kube-apiserver
// passes on to the client as its status and a Retry-After header.
func tooManyRequests(d eventratelimit.Decision) admission.Response {
	secs := max(1, int(math.Ceil(d.RetryAfter.Seconds())))
	status := apierrors.NewTooManyRequests(fmt.Sprintf(
		"event rate limit of EventRateLimit %q exceeded: retry after %s", d.RejectedBy, time.Duration(secs)*time.Second), secs).ErrStatus
	return admission.Response{AdmissionResponse: admissionv1.AdmissionResponse{Allowed: false, Result: &status}}
}

// eventFields are the fields of the source+object key in both event APIs. kube-apiserver
// converts between them (reportingComponent <-> reportingController, source <->
// deprecatedSource, involvedObject <-> regarding), so one event keys alike in either version.
type eventFields struct {
	ReportingComponent  string          `json:"reportingComponent"`  // core/v1
	ReportingController string          `json:"reportingController"` // events.k8s.io/v1
	ReportingInstance   string          `json:"reportingInstance"`
	Source              eventSource     `json:"source"`           // core/v1
	DeprecatedSource    eventSource     `json:"deprecatedSource"` // events.k8s.io/v1
	InvolvedObject      eventObjectRef  `json:"involvedObject"`   // core/v1
	Regarding           *eventObjectRef `json:"regarding"`        // events.k8s.io/v1
}

type eventSource struct {
	Component string `json:"component"`
	Host      string `json:"host"`
}

type eventObjectRef struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
	UID        string `json:"uid"`
}

// sourceAndObjectKey decodes the event's source and object: the reporting controller and
// instance (else the legacy source), and the involved or regarding object.
func sourceAndObjectKey(raw []byte) (string, error) {
	var ev eventFields
	if err := json.Unmarshal(raw, &ev); err != nil {
		return "", err
	}
	src := eventratelimit.Source{
		Component: firstNonEmpty(ev.ReportingComponent, ev.ReportingController, ev.Source.Component, ev.DeprecatedSource.Component),
		Host:      firstNonEmpty(ev.ReportingInstance, ev.Source.Host, ev.DeprecatedSource.Host),
	}
	obj := ev.InvolvedObject
	if ev.Regarding != nil {
		obj = *ev.Regarding
	}
	return eventratelimit.SourceAndObjectKey(src, eventratelimit.Object{APIVersion: obj.APIVersion, Kind: obj.Kind,
		Namespace: obj.Namespace, Name: obj.Name, UID: obj.UID}), nil
}

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}
