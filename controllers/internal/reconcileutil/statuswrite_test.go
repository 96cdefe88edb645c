package reconcileutil

import (
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
)

func TestStatusWriteResult(t *testing.T) {
	gr := schema.GroupResource{Group: flowv1.GroupVersion.Group, Resource: "flowschemas"}
	if res, err := StatusWriteResult(apierrors.NewConflict(gr, "a", errors.New("changed"))); err != nil || res.RequeueAfter != ConflictRetry {
		t.Errorf("conflict: %+v, %v; want a retry after %s", res, err, ConflictRetry)
	}
	if res, err := StatusWriteResult(apierrors.NewNotFound(gr, "a")); err != nil || res.RequeueAfter != 0 {
		t.Errorf("not found: %+v, %v; want nothing", res, err)
	}
	failure := errors.New("connection refused")
	if _, err := StatusWriteResult(failure); !errors.Is(err, failure) {
		t.Errorf("other error: %v, want it returned", err)
	}
}
