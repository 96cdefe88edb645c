package validate

import (
	"context"
	"fmt"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/manifest"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/internal/nativeview"
	"github.com/apf-operator/apf-operator/internal/nativeview/bootstrapset"
)

// Bound levels (spec.nativeLevel) name a native level of the cluster. With --from-cluster the
// cluster's own levels are read and a binding must name one of them (and the share budget is
// that cluster's). Offline, kube-apiserver's bootstrap levels are assumed to exist: a binding
// to one of them is accepted, and a binding to any other name is a warning that names
// --from-cluster, which checks it.

// nativeLevels is what the projection of validate knows of the cluster's native levels.
type nativeLevels struct {
	// cluster are the live cluster's levels (--from-cluster); nil offline.
	cluster []flowcontrolv1.PriorityLevelConfiguration
}

// existing is the native.Existing of the projection: the cluster's levels with --from-cluster,
// else none, with the bootstrap levels assumed for bindings.
func (l nativeLevels) existing(maxSeatLoss int32, unmatched native.Unmatched) native.Existing {
	e := native.Existing{MaxSeatLossPercent: &maxSeatLoss, Unmatched: unmatched, PriorityLevels: l.cluster}
	if l.cluster == nil {
		e.AssumedLevels = bootstrapset.PriorityLevels()
	}
	return e
}

// loadLevels reads the live cluster's native levels.
func loadLevels(ctx context.Context, getter genericclioptions.RESTClientGetter) (nativeLevels, error) {
	cfg, err := getter.ToRESTConfig()
	if err != nil {
		return nativeLevels{}, fmt.Errorf("loading the kubeconfig: %w", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nativeLevels{}, err
	}
	objs, err := nativeview.List(ctx, cs)
	if err != nil {
		return nativeLevels{}, fmt.Errorf("reading the cluster's native levels (--from-cluster): %w", err)
	}
	return nativeLevels{cluster: append([]flowcontrolv1.PriorityLevelConfiguration{}, objs.PriorityLevels...)}, nil
}

// boundFindings reports a binding that the projection refused: an error, except offline where
// a level that is not a bootstrap one may still exist in the cluster (a warning).
func (l nativeLevels) boundFindings(o manifest.Object, res native.Result) []manifest.Finding {
	path := field.NewPath("spec", "nativeLevel")
	switch {
	case res.Reason == v1alpha1.ReasonNativeLevelNotFound && l.cluster == nil:
		kind, name := o.KindName()
		f := manifest.DocFinding(o.Doc, kind, name, path.String(), fmt.Sprintf("%q is not one of kube-apiserver's "+
			"bootstrap levels (k8s.io/apiserver %s), so it is known only in the cluster: check it with "+
			"`apf-operator validate --from-cluster`; without it the RequestPriority and its FlowSchemas are not projected",
			o.RP.Spec.NativeLevel, bootstrapset.Version()))
		f.Severity = manifest.SeverityWarning
		return []manifest.Finding{f}
	case res.Reason == v1alpha1.ReasonExemptBindingNotAllowed:
		kind, name := o.KindName()
		f := manifest.DocFinding(o.Doc, kind, name, path.String(), "binding kube-apiserver's exempt level needs exempt "+
			"rights: the webhook refuses it from anyone else, and the operator projects it only with a record of them")
		f.Severity = manifest.SeverityWarning
		return []manifest.Finding{f}
	}
	return manifest.FieldFindings(o, field.ErrorList{field.Invalid(path, o.RP.Spec.NativeLevel, res.Message)}, nil)
}
