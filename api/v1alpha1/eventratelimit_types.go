package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// EventRateLimitType says which requests share a token bucket (seed 001's LimitType). The values
// follow the Kubernetes API conventions for enumerations (UpperCamelCase), as upstream's
// eventratelimit.admission.k8s.io types do; the seed's prose spells them in lower camel case.
// +kubebuilder:validation:Enum=Server;Namespace;User;SourceAndObject
type EventRateLimitType string

const (
	// EventRateLimitServer is one bucket shared by every event creation the API servers receive.
	EventRateLimitServer EventRateLimitType = "Server"
	// EventRateLimitNamespace is one bucket per namespace of the event.
	EventRateLimitNamespace EventRateLimitType = "Namespace"
	// EventRateLimitUser is one bucket per user who sends the request (from the authenticated
	// user of the admission request).
	EventRateLimitUser EventRateLimitType = "User"
	// EventRateLimitSourceAndObject is one bucket per combination of the event's source
	// (reporting controller and instance) and its involved (regarding) object.
	EventRateLimitSourceAndObject EventRateLimitType = "SourceAndObject"
)

// EventRateLimitTypes are the limit types, in the order the engine charges them.
var EventRateLimitTypes = []EventRateLimitType{
	EventRateLimitServer, EventRateLimitNamespace, EventRateLimitUser, EventRateLimitSourceAndObject,
}

// DefaultEventRateLimitCacheSize is the number of buckets kept per limit type when cacheSize is
// absent or 0 (seed 001).
const DefaultEventRateLimitCacheSize = 4096

// EventRateLimitSpec is the configuration of one set of event rate limits (seed 001's
// Configuration).
type EventRateLimitSpec struct {
	// limits are the token buckets an event creation must fit: at most one per type. A type
	// without a limit is not limited. At least one limit is required.
	// +required
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=4
	// +kubebuilder:validation:XValidation:rule="size(self) > 0",message="limits must hold at least one limit: add one, for example {type: Server, qps: 100, burst: 1000}"
	Limits []EventRateLimitLimit `json:"limits"`
}

// EventRateLimitLimit is the token bucket of one limit type (seed 001's Limit).
//
// +kubebuilder:validation:XValidation:rule="self.qps > 0",fieldPath=".qps",reason="FieldValueInvalid",message="qps must be positive: set the events per second each bucket refills, for example 10"
// +kubebuilder:validation:XValidation:rule="self.burst > 0",fieldPath=".burst",reason="FieldValueInvalid",message="burst must be positive: set the most events a full bucket admits at once, for example 100"
// +kubebuilder:validation:XValidation:rule="!has(self.cacheSize) || self.cacheSize >= 0",fieldPath=".cacheSize",reason="FieldValueInvalid",message="cacheSize must not be negative: set the number of buckets to keep, or 0 for the default 4096"
type EventRateLimitLimit struct {
	// type says which events share a bucket: Server (one bucket), Namespace (one per
	// namespace), User (one per requesting user) or SourceAndObject (one per event source and
	// involved object).
	// +required
	Type EventRateLimitType `json:"type"`

	// qps is how many events per second each bucket admits once its burst is used up: the
	// bucket's refill rate. Must be positive.
	// +required
	QPS int32 `json:"qps"`

	// burst is the size of each bucket: how many events it admits at once when full. Must be
	// positive.
	// +required
	Burst int32 `json:"burst"`

	// cacheSize is how many buckets of this type each webhook replica keeps, least recently
	// used first out. A bucket that is dropped starts again full when its key returns. Absent
	// or 0: 4096. Ignored for type Server (one bucket). Must not be negative.
	// +optional
	CacheSize *int32 `json:"cacheSize,omitempty"`
}

// EventRateLimitStatus is what the operator observed about an EventRateLimit.
type EventRateLimitStatus struct {
	// observedGeneration is the metadata.generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions are the latest observations; type Ready is True when the limits are enforced,
	// False with reason InvalidSpec when the spec breaks a rule (the message names the field);
	// Stalled mirrors a False Ready for kstatus (Flux).
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// acceptedEvents is how many event creations these limits admitted since countingSince,
	// as seen by the replica that writes the status (the leader). Written at most every
	// few seconds, not per event.
	// +optional
	AcceptedEvents int64 `json:"acceptedEvents,omitempty"`

	// rejectedEvents is how many event creations these limits rejected with HTTP 429 since
	// countingSince, as seen by the replica that writes the status.
	// +optional
	RejectedEvents int64 `json:"rejectedEvents,omitempty"`

	// countingSince is when that replica started counting (its start, or the last change of
	// the spec).
	// +optional
	CountingSince *metav1.Time `json:"countingSince,omitempty"`
}

// EventRateLimit limits the rate of event creation in the cluster with token buckets, enforced
// by the operator's validating webhook on CREATE of events (core/v1 and events.k8s.io/v1):
// a creation that does not fit is answered with HTTP 429 and Retry-After. Every EventRateLimit
// object is enforced: an event must fit the limits of all of them.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=erl,categories=apf
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Accepted",type=integer,JSONPath=`.status.acceptedEvents`
// +kubebuilder:printcolumn:name="Rejected",type=integer,JSONPath=`.status.rejectedEvents`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type EventRateLimit struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the set of limits.
	// +required
	Spec EventRateLimitSpec `json:"spec"`

	// status is what the operator observed.
	// +optional
	Status EventRateLimitStatus `json:"status,omitempty"`
}

// EventRateLimitList is a list of EventRateLimit objects.
//
// +kubebuilder:object:root=true
type EventRateLimitList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the EventRateLimit objects.
	Items []EventRateLimit `json:"items"`
}

// Reasons of an EventRateLimit's Ready condition besides ReasonAccepted and ReasonInvalidSpec.
const (
	// ReasonEnforcementDisabled: the operator runs without the events webhook
	// (--enable-event-rate-limit=false), so no EventRateLimit is enforced.
	ReasonEnforcementDisabled = "EnforcementDisabled"
)
