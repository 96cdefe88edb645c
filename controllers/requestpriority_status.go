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

// requestPriorityKind makes the status reconciler write the status of RequestPriority objects.
var requestPriorityKind = statusKind[*flowv1.RequestPriority]{
	name:       "requestpriority-status",
	newObject:  func() *flowv1.RequestPriority { return &flowv1.RequestPriority{} },
	native:     &flowcontrolv1.PriorityLevelConfiguration{},
	nativeKind: native.KindRequestPriority,
	views:      (*snapshot).rpViews,
	confirm:    confirmRequestPriority,
	nextStatus: nextRequestPriorityStatus,
}

// nextRequestPriorityStatus sets rp's status to the one its view gives: Ready, Projected and
// the native name, the derived figures (FlowSchemas, AssuredConcurrencyFraction,
// NativeNominalSeats, Observed), Stalled and Reconciling.
func nextRequestPriorityStatus(rp *flowv1.RequestPriority, v objectView, project bool, now metav1.Time) (statusChange, bool) {
	desired := requestPriorityStatus(rp, v.status, now)
	desired.NativeName = setProjected(&desired.Conditions, project, v.projection, rp.Generation, now)
	desired.NativeNominalSeats = v.nativeSeats
	desired.Observed = observedStatus(rp.Status.Observed, v)
	reconcileutil.SetStalledReconciling(&desired.Conditions, rp.Generation, now)
	if equality.Semantic.DeepEqual(rp.Status, desired) {
		return statusChange{}, false
	}
	change := statusChange{before: rp.Status.Conditions, after: desired.Conditions,
		write: statusWrite{first: rp.Status.ObservedGeneration == 0, figuresOnly: onlyFiguresDiffer(&rp.Status, desired)}}
	rp.Status = desired
	return change, true
}

// requestPriorityStatus returns the status rp should have, given its effective status; rp is
// not modified.
func requestPriorityStatus(rp *flowv1.RequestPriority, st effective.Status, now metav1.Time) flowv1.RequestPriorityStatus {
	out := rp.Status.DeepCopy()
	out.ObservedGeneration = rp.Generation
	out.FlowSchemas = st.FlowSchemas
	out.AssuredConcurrencyFraction = st.AssuredFraction
	reconcileutil.SetReady(&out.Conditions, st, rp.Generation, now)
	return *out
}

// onlyFiguresDiffer reports whether desired differs from the stored status only in its derived
// figures (FlowSchemas, AssuredConcurrencyFraction, NativeNominalSeats, Observed) of a status
// already written.
func onlyFiguresDiffer(stored *flowv1.RequestPriorityStatus, desired flowv1.RequestPriorityStatus) bool {
	if stored.ObservedGeneration == 0 {
		return false
	}
	desired.FlowSchemas, desired.AssuredConcurrencyFraction = stored.FlowSchemas, stored.AssuredConcurrencyFraction
	desired.NativeNominalSeats, desired.Observed = stored.NativeNominalSeats, stored.Observed
	return equality.Semantic.DeepEqual(*stored, desired)
}
