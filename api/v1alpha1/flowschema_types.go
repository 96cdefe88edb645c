package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RequestField names an attribute of an authenticated request that an atomic test examines.
//
// +kubebuilder:validation:Enum=user;groups;verb;apiGroup;resource;subresource;namespace;name;path
type RequestField string

// The request attributes a FlowSchema can test. For a non-resource request, apiGroup,
// resource, subresource, namespace and name are absent; for a resource request, path is absent.
// A positive test (equals, inSet, superSet, patternMatch) of an absent attribute is false and
// its negation is true.
const (
	FieldUser        RequestField = "user"
	FieldGroups      RequestField = "groups"
	FieldVerb        RequestField = "verb"
	FieldAPIGroup    RequestField = "apiGroup"
	FieldResource    RequestField = "resource"
	FieldSubresource RequestField = "subresource"
	FieldNamespace   RequestField = "namespace"
	FieldName        RequestField = "name"
	FieldPath        RequestField = "path"
)

// DistinguisherSource names the request attribute a flow distinguisher is computed from.
//
// +kubebuilder:validation:Enum=user;namespace
type DistinguisherSource string

const (
	// SourceUser distinguishes flows by the requesting user's name.
	SourceUser DistinguisherSource = "user"
	// SourceNamespace distinguishes flows by the namespace of a resource request; allowed only
	// when every conjunction of the FlowSchema accepts only resource requests.
	SourceNamespace DistinguisherSource = "namespace"
)

// FlowSchemaSpec says which requests the FlowSchema matches, at which matching priority, which
// RequestPriority they go to, and how they are split into flows.
type FlowSchemaSpec struct {
	// matchingPriority orders FlowSchemas: of those that match a request, the one with the
	// numerically lowest matchingPriority wins (ties are broken by name). Range 0 to
	// 1,000,000,000.
	// +required
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000000000
	MatchingPriority int32 `json:"matchingPriority"`

	// requestPriority names the RequestPriority the matched requests go to. A missing one makes
	// the FlowSchema match nothing until it appears (its requests fall through to backstops).
	// +required
	RequestPriority RequestPriorityReference `json:"requestPriority"`

	// flowDistinguisher computes the flow of a request within its FlowSchema. Absent: all the
	// FlowSchema's requests of one width form one flow. Not allowed when the RequestPriority
	// has level 0 or queuesPerWidth 1.
	// +optional
	FlowDistinguisher *FlowDistinguisher `json:"flowDistinguisher,omitempty"`

	// match is an OR of conjunctions: the FlowSchema matches a request when any conjunction
	// accepts it. `- and: []` accepts every request; `match: []` matches nothing.
	// At most 64 conjunctions.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	Match []Conjunction `json:"match"`
}

// RequestPriorityReference names a RequestPriority.
type RequestPriorityReference struct {
	// name is the name of the RequestPriority (a DNS subdomain name, at most 253 characters).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// FlowDistinguisher computes a request's flow distinguisher from one of its attributes.
type FlowDistinguisher struct {
	// source is the attribute: `user` (the user name) or `namespace` (the namespace of a
	// resource request).
	// +required
	Source DistinguisherSource `json:"source"`

	// transformation, if present, maps the attribute through a regular expression.
	// +optional
	Transformation *Transformation `json:"transformation,omitempty"`
}

// Transformation maps a string through a regular expression: a complete match yields
// submatch 1; no match yields the empty string.
type Transformation struct {
	// regex is an RE2 regular expression with at least one capturing group, matched against
	// the whole attribute. At most 512 characters.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Regex string `json:"regex"`
}

// Conjunction is an AND of atomic tests.
type Conjunction struct {
	// and lists the atomic tests that must all accept a request; an empty list accepts every
	// request. At most 32 tests.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	And []AtomicTest `json:"and"`
}

// AtomicTest compares one request attribute with a literal. Exactly one operator is set.
//
// Every rule names the field it is about (fieldPath), as the offline validator does: the test
// itself when it has no operator, a second operator, or the field of an operator.
//
// +kubebuilder:validation:XValidation:rule="has(self.equals) || has(self.notEquals) || has(self.inSet) || has(self.notInSet) || has(self.superSet) || has(self.notSuperSet) || has(self.patternMatch) || has(self.notPatternMatch)",message="an atomic test takes exactly one operator: set one of equals, notEquals, inSet, notInSet, superSet, notSuperSet, patternMatch, notPatternMatch",reason="FieldValueRequired"
// +kubebuilder:validation:XValidation:rule="!has(self.notEquals) || !(has(self.equals))",message="an atomic test takes exactly one operator and this one already has equals: move notEquals to a test of its own",fieldPath=".notEquals",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="!has(self.inSet) || !(has(self.equals) || has(self.notEquals))",message="an atomic test takes exactly one operator and this one already has equals or notEquals: move inSet to a test of its own",fieldPath=".inSet",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="!has(self.notInSet) || !(has(self.equals) || has(self.notEquals) || has(self.inSet))",message="an atomic test takes exactly one operator and this one already has one of equals, notEquals, inSet: move notInSet to a test of its own",fieldPath=".notInSet",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="!has(self.superSet) || !(has(self.equals) || has(self.notEquals) || has(self.inSet) || has(self.notInSet))",message="an atomic test takes exactly one operator and this one already has one of equals, notEquals, inSet, notInSet: move superSet to a test of its own",fieldPath=".superSet",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="!has(self.notSuperSet) || !(has(self.equals) || has(self.notEquals) || has(self.inSet) || has(self.notInSet) || has(self.superSet))",message="an atomic test takes exactly one operator and this one already has one of equals, notEquals, inSet, notInSet, superSet: move notSuperSet to a test of its own",fieldPath=".notSuperSet",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="!has(self.patternMatch) || !(has(self.equals) || has(self.notEquals) || has(self.inSet) || has(self.notInSet) || has(self.superSet) || has(self.notSuperSet))",message="an atomic test takes exactly one operator and this one already has one of equals, notEquals, inSet, notInSet, superSet, notSuperSet: move patternMatch to a test of its own",fieldPath=".patternMatch",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="!has(self.notPatternMatch) || !(has(self.equals) || has(self.notEquals) || has(self.inSet) || has(self.notInSet) || has(self.superSet) || has(self.notSuperSet) || has(self.patternMatch))",message="an atomic test takes exactly one operator and this one already has one of equals, notEquals, inSet, notInSet, superSet, notSuperSet, patternMatch: move notPatternMatch to a test of its own",fieldPath=".notPatternMatch",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="!has(self.superSet) || self.superSet.field == 'groups'",message="superSet applies only to field groups: use field groups, or inSet/notInSet for a scalar field",fieldPath=".superSet.field",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.notSuperSet) || self.notSuperSet.field == 'groups'",message="notSuperSet applies only to field groups: use field groups, or inSet/notInSet for a scalar field",fieldPath=".notSuperSet.field",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.equals) || self.equals.field != 'groups'",message="field groups is a set and equals compares one value: test groups with superSet or notSuperSet",fieldPath=".equals.field",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.notEquals) || self.notEquals.field != 'groups'",message="field groups is a set and notEquals compares one value: test groups with superSet or notSuperSet",fieldPath=".notEquals.field",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.inSet) || self.inSet.field != 'groups'",message="field groups is a set and inSet compares one value: test groups with superSet or notSuperSet",fieldPath=".inSet.field",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.notInSet) || self.notInSet.field != 'groups'",message="field groups is a set and notInSet compares one value: test groups with superSet or notSuperSet",fieldPath=".notInSet.field",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.patternMatch) || self.patternMatch.field != 'groups'",message="field groups is a set and patternMatch compares one value: test groups with superSet or notSuperSet",fieldPath=".patternMatch.field",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.notPatternMatch) || self.notPatternMatch.field != 'groups'",message="field groups is a set and notPatternMatch compares one value: test groups with superSet or notSuperSet",fieldPath=".notPatternMatch.field",reason="FieldValueInvalid"
type AtomicTest struct {
	// equals accepts a request whose field equals value.
	// +optional
	Equals *ValueTest `json:"equals,omitempty"`
	// notEquals accepts a request whose field does not equal value (or is absent).
	// +optional
	NotEquals *ValueTest `json:"notEquals,omitempty"`
	// inSet accepts a request whose field is one of set.
	// +optional
	InSet *SetTest `json:"inSet,omitempty"`
	// notInSet accepts a request whose field is none of set (or is absent).
	// +optional
	NotInSet *SetTest `json:"notInSet,omitempty"`
	// superSet accepts a request whose groups include every member of set (field: groups).
	// +optional
	SuperSet *SetTest `json:"superSet,omitempty"`
	// notSuperSet accepts a request whose groups lack at least one member of set.
	// +optional
	NotSuperSet *SetTest `json:"notSuperSet,omitempty"`
	// patternMatch accepts a request whose field matches pattern completely.
	// +optional
	PatternMatch *PatternTest `json:"patternMatch,omitempty"`
	// notPatternMatch accepts a request whose field does not match pattern (or is absent).
	// +optional
	NotPatternMatch *PatternTest `json:"notPatternMatch,omitempty"`
}

// ValueTest compares a scalar field with one value.
type ValueTest struct {
	// field is the request attribute (not groups).
	// +required
	Field RequestField `json:"field"`
	// value is compared with the attribute, exactly. At most 1024 characters.
	// +required
	// +kubebuilder:validation:MaxLength=1024
	Value string `json:"value"`
}

// SetTest compares a field with a set of values.
type SetTest struct {
	// field is the request attribute: groups for superSet and notSuperSet, a scalar field
	// for inSet and notInSet.
	// +required
	Field RequestField `json:"field"`
	// set is the non-empty set of values; at most 256 values of at most 1024 characters.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=1024
	Set []string `json:"set"`
}

// PatternTest matches a scalar field against a regular expression.
type PatternTest struct {
	// field is the request attribute (not groups).
	// +required
	Field RequestField `json:"field"`
	// pattern is an RE2 regular expression matched against the whole attribute value.
	// At most 512 characters.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Pattern string `json:"pattern"`
}

// FlowSchemaStatus is what the operator observed about a FlowSchema.
type FlowSchemaStatus struct {
	// observedGeneration is the metadata.generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions are the latest observations; type Ready tells whether the filter uses this
	// FlowSchema, with a reason such as Accepted or RequestPriorityNotFound; Stalled and
	// Reconciling summarise Ready and Projected for kstatus (Flux).
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// nativeName is the name of the flowcontrol.apiserver.k8s.io/v1 FlowSchema this object is
	// projected onto (condition Projected tells whether it is). Empty when the operator does
	// not project (enforcement none) or the object is not projected.
	// +optional
	NativeName string `json:"nativeName,omitempty"`

	// observed summarises the requests kube-apiserver rejected that the native FlowSchema this
	// object is projected onto classified, enforcement native only; unset until a rejection was
	// seen, or when the operator cannot read kube-apiserver's /metrics.
	// +optional
	Observed *ObservedTraffic `json:"observed,omitempty"`
}

// FlowSchema assigns matching requests to a RequestPriority and splits them into flows.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=afs,categories=apf
// +kubebuilder:printcolumn:name="MatchingPriority",type=integer,JSONPath=`.spec.matchingPriority`
// +kubebuilder:printcolumn:name="RequestPriority",type=string,JSONPath=`.spec.requestPriority.name`
// +kubebuilder:printcolumn:name="Distinguisher",type=string,JSONPath=`.spec.flowDistinguisher.source`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Projected",type=string,JSONPath=`.status.conditions[?(@.type=="Projected")].status`
// +kubebuilder:printcolumn:name="Native",type=string,priority=1,JSONPath=`.status.nativeName`
// +kubebuilder:printcolumn:name="Rejected5m",type=integer,priority=1,JSONPath=`.status.observed.rejectedLast5m`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type FlowSchema struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is what the FlowSchema matches and where it sends the requests.
	// +required
	Spec FlowSchemaSpec `json:"spec"`

	// status is what the operator observed.
	// +optional
	Status FlowSchemaStatus `json:"status,omitempty"`
}

// FlowSchemaList is a list of FlowSchema objects.
//
// +kubebuilder:object:root=true
type FlowSchemaList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the FlowSchema objects.
	Items []FlowSchema `json:"items"`
}
