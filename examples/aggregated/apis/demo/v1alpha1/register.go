package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of the sample server.
const GroupName = "demo.apf-operator.io"

// SchemeGroupVersion is the group and version served.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

// internalGroupVersion is the hub version the generic API server converts through. This API
// has a single version, so the hub uses the same Go types and conversion is a no-op.
var internalGroupVersion = schema.GroupVersion{Group: GroupName, Version: runtime.APIVersionInternal}

// AddToScheme registers the types in scheme, under v1alpha1 and the internal version.
func AddToScheme(scheme *runtime.Scheme) error {
	for _, gv := range []schema.GroupVersion{SchemeGroupVersion, internalGroupVersion} {
		scheme.AddKnownTypes(gv, &Widget{}, &WidgetList{})
	}
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}

// Resource returns the group-qualified resource of name, for API errors.
func Resource(name string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(name).GroupResource()
}
