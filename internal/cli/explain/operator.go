package explain

import (
	"context"
	"fmt"
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/native"
)

// parseServiceAccount reads --operator-service-account, NAMESPACE/NAME; nil for "".
func parseServiceAccount(s string) (*native.ServiceAccount, error) {
	if s == "" {
		return nil, nil
	}
	ns, name, ok := strings.Cut(s, "/")
	if !ok || len(validation.IsDNS1123Label(ns)) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0 {
		return nil, fmt.Errorf("--operator-service-account %q: want NAMESPACE/NAME, e.g. apf-system/apf-operator", s)
	}
	return &native.ServiceAccount{Namespace: ns, Name: name}, nil
}

// operatorFromCluster reads the service account of the live cluster's operator route from its
// source annotation; nil when there is none or it cannot be read (explain then shows no route).
func operatorFromCluster(ctx context.Context, kubeconfig, kubeContext string) *native.ServiceAccount {
	cfg, err := restConfig(kubeconfig, kubeContext)
	if err != nil {
		return nil
	}
	s := runtime.NewScheme()
	if flowcontrolv1.AddToScheme(s) != nil {
		return nil
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return nil
	}
	var route flowcontrolv1.FlowSchema
	if c.Get(ctx, client.ObjectKey{Name: native.OperatorRouteName}, &route) != nil || !native.Owned(&route) {
		return nil
	}
	sa, ok := strings.CutPrefix(route.Annotations[flowv1.AnnotationSource], native.KindOperator+"/")
	if !ok {
		return nil
	}
	out, _ := parseServiceAccount(sa)
	return out
}

// bootstrapLevels are kube-apiserver's mandatory and suggested levels, as it creates them.
func bootstrapLevels() []flowcontrolv1.PriorityLevelConfiguration {
	var out []flowcontrolv1.PriorityLevelConfiguration
	for _, list := range [][]*flowcontrolv1.PriorityLevelConfiguration{
		bootstrap.MandatoryPriorityLevelConfigurations, bootstrap.SuggestedPriorityLevelConfigurations} {
		for _, l := range list {
			out = append(out, *l.DeepCopy())
		}
	}
	return out
}
