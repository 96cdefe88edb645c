package replay

import (
	"context"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/manifest"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/internal/nativeview"
)

// LoadCluster lists the live cluster's native FlowSchemas and PriorityLevelConfigurations
// (nativeview.List).
func LoadCluster(ctx context.Context, flags *genericclioptions.ConfigFlags) (nativeview.Objects, error) {
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return nativeview.Objects{}, fmt.Errorf("loading the kubeconfig: %w", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nativeview.Objects{}, err
	}
	return nativeview.List(ctx, cs)
}

// Projection is how a set of our manifests is projected onto kube-apiserver's flow control.
type Projection struct {
	// Operator is the operator's service account, whose requests its own route takes; nil:
	// none.
	Operator *native.ServiceAccount
	// Unmatched is the operator's --native-unmatched choice.
	Unmatched native.Unmatched
}

// LoadProjected reads our manifests (files or directories) and returns the native objects
// kube-apiserver would hold once the operator projected them onto base: base's objects that
// the operator does not own, plus the projection; and the manifests' objects the operator
// would not project (the replay classifies without them).
func LoadProjected(paths []string, stdin io.Reader, base nativeview.Objects, p Projection) (nativeview.Objects, []NotProjected, error) {
	rps, fss, err := manifest.LoadObjects(paths, stdin)
	if err != nil {
		return nativeview.Objects{}, nil, err
	}
	objs, skipped := Project(effective.Compute(rps, fss), base, p)
	return objs, skipped, nil
}

// projectObjects projects manifests onto base with no operator route.
func projectObjects(rps []flowv1.RequestPriority, fss []flowv1.FlowSchema, base nativeview.Objects) nativeview.Objects {
	objs, _ := Project(effective.Compute(rps, fss), base, Projection{})
	return objs
}

// Project returns base's unowned objects plus the projection of cfg onto them, and the
// objects of cfg that are not projected.
func Project(cfg *effective.Config, base nativeview.Objects, p Projection) (nativeview.Objects, []NotProjected) {
	plan := native.Project(cfg, native.Existing{PriorityLevels: base.PriorityLevels, FlowSchemas: base.FlowSchemas,
		Operator: p.Operator, Unmatched: p.Unmatched})
	out := nativeview.Objects{}
	for i := range base.FlowSchemas {
		if !native.Owned(&base.FlowSchemas[i]) {
			out.FlowSchemas = append(out.FlowSchemas, base.FlowSchemas[i])
		}
	}
	for i := range base.PriorityLevels {
		if !native.Owned(&base.PriorityLevels[i]) {
			out.PriorityLevels = append(out.PriorityLevels, base.PriorityLevels[i])
		}
	}
	out.FlowSchemas = append(out.FlowSchemas, plan.FlowSchemas...)
	out.PriorityLevels = append(out.PriorityLevels, plan.PriorityLevels...)
	return out, notProjected(plan)
}

// OperatorRoute returns the service account of the operator's route among objs (the native
// FlowSchema it projects for its own requests); nil when there is none.
func OperatorRoute(objs nativeview.Objects) *native.ServiceAccount {
	for i := range objs.FlowSchemas {
		fs := &objs.FlowSchemas[i]
		if fs.Name != native.OperatorRouteName || !native.Owned(fs) {
			continue
		}
		sa, ok := strings.CutPrefix(fs.Annotations[flowv1.AnnotationSource], native.KindOperator+"/")
		if !ok {
			return nil
		}
		out, _ := ParseServiceAccount(sa)
		return out
	}
	return nil
}

// ParseServiceAccount reads NAMESPACE/NAME; nil for "".
func ParseServiceAccount(s string) (*native.ServiceAccount, error) {
	if s == "" {
		return nil, nil
	}
	ns, name, ok := strings.Cut(s, "/")
	if !ok || len(validation.IsDNS1123Label(ns)) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0 {
		return nil, fmt.Errorf("%q: want NAMESPACE/NAME, e.g. apf-system/apf-operator", s)
	}
	return &native.ServiceAccount{Namespace: ns, Name: name}, nil
}
