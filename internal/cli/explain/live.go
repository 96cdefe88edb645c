package explain

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apf/request"
	"github.com/apf-operator/apf-operator/internal/nativeview"
)

// live answers from the cluster's real native objects; the operator's objects and their
// Projected conditions explain the answer when its API is installed.
func (o *options) live(ctx context.Context, a *request.Attributes) (*Report, error) {
	cfg, err := o.restConfig()
	if err != nil {
		return nil, fmt.Errorf("loading the kubeconfig: %w", err)
	}
	var note string
	if a.ResourceRequest {
		note = resolveResource(cfg, a)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	view, err := nativeview.FromCluster(ctx, cs)
	if err != nil {
		return nil, err
	}
	objs, err := readOurs(ctx, cfg)
	if err != nil {
		return nil, err
	}
	r := o.report(modeLive, view, effective.Compute(objs.rps, objs.fss), objs.status, a)
	r.Note = note
	if objs.missing {
		r.Ours = &Ours{Summary: "the operator's API (flowcontrol.apf-operator.io) is not installed in this cluster"}
	}
	return r, nil
}

// restConfig is the kubeconfig's client configuration without impersonation: --as and
// --as-group describe the request to explain, not who reads the cluster.
func (o *options) restConfig() (*rest.Config, error) {
	cfg, err := o.config.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.Impersonate = rest.ImpersonationConfig{}
	return cfg, nil
}

// ourObjects are the operator's API objects of the cluster.
type ourObjects struct {
	rps     []flowv1.RequestPriority
	fss     []flowv1.FlowSchema
	missing bool // the API is not installed
}

// status returns the Projected condition of our FlowSchema name.
func (o *ourObjects) status(name string) (projectedStatus, bool) {
	for i := range o.fss {
		if o.fss[i].Name != name {
			continue
		}
		c := meta.FindStatusCondition(o.fss[i].Status.Conditions, flowv1.ConditionProjected)
		if c == nil {
			return projectedStatus{Reason: "Unknown", Message: "the FlowSchema has no Projected condition " +
				"(the operator runs with --enforcement=none, or has not reconciled it yet)"}, true
		}
		return projectedStatus{Projected: c.Status == "True", Reason: c.Reason, Message: c.Message}, true
	}
	return projectedStatus{}, false
}

// readOurs lists the operator's RequestPriority and FlowSchema objects.
func readOurs(ctx context.Context, cfg *rest.Config) (*ourObjects, error) {
	s := runtime.NewScheme()
	if err := flowv1.AddToScheme(s); err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return nil, err
	}
	var rps flowv1.RequestPriorityList
	var fss flowv1.FlowSchemaList
	err = c.List(ctx, &rps)
	if err == nil {
		err = c.List(ctx, &fss)
	}
	var noMatch *meta.NoKindMatchError
	switch {
	case errors.As(err, &noMatch) || meta.IsNoMatchError(err):
		return &ourObjects{missing: true}, nil
	case err != nil:
		return nil, fmt.Errorf("listing the operator's RequestPriority and FlowSchema objects: %w", err)
	}
	return &ourObjects{rps: rps.Items, fss: fss.Items}, nil
}
