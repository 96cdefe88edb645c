package controllers

import (
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/controllers/internal/reconcileutil"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/native"
)

// flowSchemaKind makes the status reconciler write the status of FlowSchema objects.
var flowSchemaKind = statusKind[*flowv1.FlowSchema]{
	name:       "flowschema-status",
	newObject:  func() *flowv1.FlowSchema { return &flowv1.FlowSchema{} },
	native:     &flowcontrolv1.FlowSchema{},
	nativeKind: native.KindFlowSchema,
	views:      (*snapshot).fsViews,
	confirm:    confirmFlowSchema,
	nextStatus: nextFlowSchemaStatus,
}

// nextFlowSchemaStatus sets fs's status to the one its view gives: Ready, Projected and the
// native name, Observed, Stalled and Reconciling. A first status that reports the
// RequestPriority missing is marked as such, for deferred.
func nextFlowSchemaStatus(fs *flowv1.FlowSchema, v objectView, project bool, now metav1.Time) (statusChange, bool) {
	desired := flowSchemaStatus(fs, v.status, now)
	desired.NativeName = setProjected(&desired.Conditions, project, v.projection, fs.Generation, now)
	desired.Observed = observedStatus(fs.Status.Observed, v)
	reconcileutil.SetStalledReconciling(&desired.Conditions, fs.Generation, now)
	if equality.Semantic.DeepEqual(fs.Status, desired) {
		return statusChange{}, false
	}
	change := statusChange{before: fs.Status.Conditions, after: desired.Conditions,
		write: statusWrite{first: fs.Status.ObservedGeneration == 0, figuresOnly: onlyObservedDiffers(&fs.Status, desired),
			danglingReference: v.status.Reason == flowv1.ReasonRequestPriorityNotFound}}
	fs.Status = desired
	return change, true
}

// flowSchemaStatus returns the status fs should have, given its effective status; fs is not
// modified.
func flowSchemaStatus(fs *flowv1.FlowSchema, st effective.Status, now metav1.Time) flowv1.FlowSchemaStatus {
	out := fs.Status.DeepCopy()
	out.ObservedGeneration = fs.Generation
	reconcileutil.SetReady(&out.Conditions, st, fs.Generation, now)
	return *out
}

// onlyObservedDiffers reports whether desired differs from the stored status only in its
// summary of kube-apiserver's rejections, a derived figure, of a status already written.
func onlyObservedDiffers(stored *flowv1.FlowSchemaStatus, desired flowv1.FlowSchemaStatus) bool {
	if stored.ObservedGeneration == 0 {
		return false
	}
	desired.Observed = stored.Observed
	return equality.Semantic.DeepEqual(*stored, desired)
}
