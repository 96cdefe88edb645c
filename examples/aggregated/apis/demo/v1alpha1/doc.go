// Package v1alpha1 is the demo.apf-operator.io/v1alpha1 API of the sample aggregated API
// server: one namespaced resource, widgets, kept in memory.
//
// +k8s:openapi-gen=true
// +k8s:openapi-model-package=io.apf-operator.demo.v1alpha1
package v1alpha1
