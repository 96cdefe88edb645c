// Package v1alpha1 contains the API types of the flowcontrol.apf-operator.io/v1alpha1 group:
// RequestPriority (a priority level with its queuing parameters), FlowSchema (which requests
// go to which RequestPriority, and how they are split into flows) and EventRateLimit (token
// buckets on event creation, seed 001). The semantics are those of
// the API Priority and Fairness proposal; see DESIGN.md in the project's shared folder.
//
// +kubebuilder:object:generate=true
// +groupName=flowcontrol.apf-operator.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of the types in this package.
	GroupVersion = schema.GroupVersion{Group: "flowcontrol.apf-operator.io", Version: "v1alpha1"}

	// SchemeBuilder registers the types of this package with a runtime.Scheme. It is
	// apimachinery's, not controller-runtime's, so that the engine in internal/apf, which
	// imports these types, stays free of controller-runtime.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the types of this package to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion,
		&RequestPriority{}, &RequestPriorityList{},
		&FlowSchema{}, &FlowSchemaList{},
		&EventRateLimit{}, &EventRateLimitList{},
	)
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
