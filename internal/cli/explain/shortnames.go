package explain

import (
	"fmt"
	"io"

	"github.com/apf-operator/apf-operator/internal/apf/request"
)

// shortNames are kube-apiserver's short names of its built-in resources (as `kubectl
// api-resources` lists them), with the --resource spelling they stand for. Live, discovery
// expands them; offline, --resource is taken literally, so a short name gets a hint.
var shortNames = map[string]string{
	"cm": "configmaps", "cs": "componentstatuses", "csr": "certificatesigningrequests.certificates.k8s.io",
	"crd": "customresourcedefinitions.apiextensions.k8s.io", "crds": "customresourcedefinitions.apiextensions.k8s.io",
	"cj": "cronjobs.batch", "deploy": "deployments.apps", "ds": "daemonsets.apps", "ep": "endpoints", "ev": "events",
	"hpa": "horizontalpodautoscalers.autoscaling", "ing": "ingresses.networking.k8s.io", "limits": "limitranges",
	"netpol": "networkpolicies.networking.k8s.io", "no": "nodes", "ns": "namespaces", "pc": "priorityclasses.scheduling.k8s.io",
	"pdb": "poddisruptionbudgets.policy", "po": "pods", "pv": "persistentvolumes", "pvc": "persistentvolumeclaims",
	"quota": "resourcequotas", "rc": "replicationcontrollers", "rs": "replicasets.apps", "sa": "serviceaccounts",
	"sc": "storageclasses.storage.k8s.io", "sts": "statefulsets.apps", "svc": "services",
}

// hintShortName writes to w (standard error) a hint when an offline --resource without a
// group is one of kube-apiserver's short names.
func hintShortName(w io.Writer, a *request.Attributes) {
	if !a.ResourceRequest || a.APIGroup != "" {
		return
	}
	if full, ok := shortNames[a.Resource]; ok {
		fmt.Fprintf(w, "warning: --resource %q looks like a short name; offline (-f), resources are taken literally, "+
			"as kube-apiserver's URLs spell them: did you mean --resource %s?\n", a.Resource, full)
	}
}
