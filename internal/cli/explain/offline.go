package explain

import (
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apf/request"
	"github.com/apf-operator/apf-operator/internal/manifest"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/internal/nativeview"
)

// offline answers from the manifests: kube-apiserver's bootstrap objects with the manifests'
// projection, made with the operator's settings given by the flags.
func (o *options) offline(a *request.Attributes) (*Report, error) {
	hintShortName(o.errOut, a)
	rps, fss, err := manifest.LoadObjects(o.paths, os.Stdin)
	if err != nil {
		return nil, err
	}
	cfg := effective.Compute(rps, fss)
	operator, _ := parseServiceAccount(o.operator)
	base, err := nativeview.BootstrapForVersion(o.kubeVersion)
	if err != nil {
		return nil, err
	}
	view, plan := base.WithProjection(cfg, native.Existing{Operator: operator,
		Unmatched: native.Unmatched(o.unmatched)})
	status := func(name string) (projectedStatus, bool) {
		res, ok := plan.FlowSchemaResults[name]
		return projectedStatus{Projected: res.Projected, Reason: res.Reason, Message: res.Message}, ok
	}
	return o.report(modeOffline, view, cfg, status, a), nil
}

// cutServiceAccount splits NAMESPACE/NAME and checks both parts as kube-apiserver would.
func cutServiceAccount(s string) (string, string, bool) {
	ns, name, ok := strings.Cut(s, "/")
	return ns, name, ok && len(validation.IsDNS1123Label(ns)) == 0 && len(validation.IsDNS1123Subdomain(name)) == 0
}
