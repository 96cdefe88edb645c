package native

import (
	"context"
	"fmt"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	flowcontrolclient "k8s.io/client-go/kubernetes/typed/flowcontrol/v1"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
)

// The cluster's own native objects are every FlowSchema and PriorityLevelConfiguration that does
// not carry the operator's label app.kubernetes.io/managed-by=apf-operator: kube-apiserver's
// mandatory and suggested objects as its version bootstraps them (1.29 to 1.33 also have
// workload-leader-election at 200; 1.36 has not), a managed provider's (EKS adds eks-exempt at
// 2 and eks-workload-high at 1000) and an administrator's. Placement and the share budget are
// computed from them as read from the cluster, never from a vendored list.

// TailPrecedence is where kube-apiserver's general schemas start: service-accounts (9000),
// global-default (9900) and catch-all (10000), the same on every version from 1.29 to 1.36.
// The projection sits ahead of every schema of the cluster at TailPrecedence or after, and
// after every one before it.
const TailPrecedence = MaxPrecedence + 1

// ClusterOwned reports whether a native object is the cluster's own (kube-apiserver's, a
// provider's or an administrator's): it does not carry the operator's managed-by label. The
// projection keeps such FlowSchemas (before TailPrecedence) ahead of its own, and the share
// budget protects such levels.
func ClusterOwned(obj metav1.Object) bool {
	return obj.GetLabels()[flowv1.LabelManagedBy] != flowv1.ManagedByValue
}

// ClusterSchemas are the cluster's own FlowSchemas among e's (see ClusterOwned).
func (e Existing) ClusterSchemas() []flowcontrolv1.FlowSchema {
	var out []flowcontrolv1.FlowSchema
	for i := range e.FlowSchemas {
		if ClusterOwned(&e.FlowSchemas[i]) {
			out = append(out, e.FlowSchemas[i])
		}
	}
	return out
}

// ClusterLevels are the cluster's own PriorityLevelConfigurations among e's (see ClusterOwned).
func (e Existing) ClusterLevels() []flowcontrolv1.PriorityLevelConfiguration {
	var out []flowcontrolv1.PriorityLevelConfiguration
	for i := range e.PriorityLevels {
		if ClusterOwned(&e.PriorityLevels[i]) {
			out = append(out, e.PriorityLevels[i])
		}
	}
	return out
}

// FirstPrecedence is the matching precedence of the first projected FlowSchema: MinPrecedence,
// or, when one of the cluster's own FlowSchemas before TailPrecedence sits at MinPrecedence-1
// or later (EKS's eks-workload-high at 1000), two past the last of them, so that it and the
// operator's route (at FirstPrecedence-1) both come after it. Equal precedences would not do:
// kube-apiserver breaks ties by name, and "apf-…" sorts before most names.
func (e Existing) FirstPrecedence() int32 {
	first := int32(MinPrecedence)
	for i := range e.FlowSchemas {
		fs := &e.FlowSchemas[i]
		if p := fs.Spec.MatchingPrecedence; ClusterOwned(fs) && p < TailPrecedence {
			first = max(first, p+2)
		}
	}
	return first
}

// ReadExisting lists every native PriorityLevelConfiguration and FlowSchema of a live cluster,
// the operator's and the cluster's own, as Project takes them. With ClusterSchemas and
// ClusterLevels it tells what kube-apiserver (at its version), the provider and the
// administrators configured, which `explain` and the projection use instead of the bootstrap
// configuration vendored in k8s.io/apiserver.
func ReadExisting(ctx context.Context, c flowcontrolclient.FlowcontrolV1Interface) (Existing, error) {
	plcs, err := c.PriorityLevelConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		return Existing{}, fmt.Errorf("listing PriorityLevelConfigurations: %w", err)
	}
	fss, err := c.FlowSchemas().List(ctx, metav1.ListOptions{})
	if err != nil {
		return Existing{}, fmt.Errorf("listing FlowSchemas: %w", err)
	}
	return Existing{PriorityLevels: plcs.Items, FlowSchemas: fss.Items}, nil
}
