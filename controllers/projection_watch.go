package controllers

import (
	"context"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/native"
)

// nativeSource maps a native object to the API object of kind its Projected condition
// depends on: the source an owned object names, or the object whose projected name it holds
// (a name conflict).
func nativeSource(kind string) func(context.Context, client.Object) []reconcile.Request {
	return func(_ context.Context, obj client.Object) []reconcile.Request {
		var name string
		if native.Owned(obj) {
			src, ok := strings.CutPrefix(obj.GetAnnotations()[flowv1.AnnotationSource], kind+"/")
			if !ok {
				return nil
			}
			name = src
		} else if n, ok := strings.CutPrefix(obj.GetName(), "apf-"); ok {
			name = n
		} else {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: name}}}
	}
}
