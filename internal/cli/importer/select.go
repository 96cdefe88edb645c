package importer

import (
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
)

// origin is who made a native object, which decides whether it is imported.
type origin int

const (
	originUser      origin = iota // anyone else: imported
	originMandatory               // kube-apiserver's exempt and catch-all: never imported
	originSuggested               // kube-apiserver's suggested objects: with --include-bootstrap
	originOperator                // projected by the operator: never imported
)

// suggestedLevels and suggestedSchemas are the names of kube-apiserver's suggested objects,
// past and present (k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap).
var (
	suggestedLevels = names("system", "node-high", "leader-election", "workload-high", "workload-low",
		"global-default")
	suggestedSchemas = names("probes", "system-leader-election", "workload-leader-election", "endpoint-controller",
		"system-node-high", "system-nodes", "kube-controller-manager", "kube-scheduler",
		"kube-system-service-accounts", "service-accounts", "global-default")
)

func names(list ...string) map[string]bool {
	out := make(map[string]bool, len(list))
	for _, n := range list {
		out[n] = true
	}
	return out
}

// originOf tells who made obj; suggested holds the suggested names of its kind.
func originOf(obj metav1.Object, suggested map[string]bool) origin {
	name := obj.GetName()
	_, autoUpdate := obj.GetAnnotations()[flowcontrolv1.AutoUpdateAnnotationKey]
	switch {
	case name == flowcontrolv1.PriorityLevelConfigurationNameExempt || name == flowcontrolv1.PriorityLevelConfigurationNameCatchAll:
		return originMandatory
	case obj.GetLabels()[flowv1.LabelManagedBy] == flowv1.ManagedByValue:
		return originOperator
	case suggested[name] && autoUpdate:
		return originSuggested
	}
	return originUser
}

// why says why an object of this origin is skipped.
func (o origin) why() string {
	switch o {
	case originMandatory:
		return "kube-apiserver's mandatory object"
	case originSuggested:
		return "kube-apiserver's suggested object; pass --include-bootstrap to import it"
	case originOperator:
		return "projected by the operator (label " + flowv1.LabelManagedBy + "=" + flowv1.ManagedByValue +
			"); export its source with kubectl get requestpriorities,flowschemas.flowcontrol.apf-operator.io"
	}
	return ""
}

// who names the maker of an object of kube-apiserver's.
func (o origin) who() string {
	if o == originMandatory {
		return "kube-apiserver's mandatory level"
	}
	return "kube-apiserver's suggested level"
}

// imported reports whether an object of this origin is imported.
func (o origin) imported(opts Options) bool {
	return o == originUser || (o == originSuggested && opts.IncludeBootstrap)
}
