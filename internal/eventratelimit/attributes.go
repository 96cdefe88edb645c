package eventratelimit

import (
	"strings"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

// Attributes are what the buckets of an event creation are keyed by.
type Attributes struct {
	// Namespace is the namespace of the request (the event's namespace).
	Namespace string
	// User is the authenticated user who sent the request, as kube-apiserver tells the webhook.
	User string
	// SourceAndObject identifies the event's source and involved object (SourceAndObjectKey);
	// only needed when Engine.Uses(SourceAndObject).
	SourceAndObject string
}

// key returns the bucket key of the limit type t.
func (a *Attributes) key(t v1alpha1.EventRateLimitType) string {
	switch t {
	case v1alpha1.EventRateLimitNamespace:
		return a.Namespace
	case v1alpha1.EventRateLimitUser:
		return a.User
	case v1alpha1.EventRateLimitSourceAndObject:
		return a.SourceAndObject
	}
	return ""
}

// Source is who reported an event: its reporting controller (component) and instance (host).
type Source struct {
	Component string
	Host      string
}

// Object is the object an event is about (involvedObject in core/v1, regarding in
// events.k8s.io/v1).
type Object struct {
	APIVersion string
	Kind       string
	Namespace  string
	Name       string
	UID        string
}

// keySeparator cannot occur in a Kubernetes name, kind, version or UID, so distinct fields can
// never produce the same key (upstream concatenates them without one).
const keySeparator = "\x00"

// SourceAndObjectKey is the key of the SourceAndObject buckets: the fields upstream's
// EventRateLimit plugin uses (source component and host, and the involved object's kind,
// namespace, name, UID and API version).
func SourceAndObjectKey(s Source, o Object) string {
	return strings.Join([]string{s.Component, s.Host, o.Kind, o.Namespace, o.Name, o.UID, o.APIVersion}, keySeparator)
}
