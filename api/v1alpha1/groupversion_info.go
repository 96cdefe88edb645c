// Package v1alpha1 contains the API types of the flowcontrol.apf-operator.io/v1alpha1 group:
// RequestPriority (a priority level with its queuing parameters) and FlowSchema (which requests
// go to which RequestPriority, and how they are split into flows). The semantics are those of
// the API Priority and Fairness proposal; see DESIGN.md in the project's shared folder.
//
// +kubebuilder:object:generate=true
// +groupName=flowcontrol.apf-operator.io
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of the types in this package.
	GroupVersion = schema.GroupVersion{Group: "flowcontrol.apf-operator.io", Version: "v1alpha1"}

	// SchemeBuilder registers the types of this package with a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the types of this package to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
