package operator

import (
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
)

// LoadRESTConfig returns the configuration of the kubeconfig file at path; with an empty path,
// controller-runtime's: $KUBECONFIG, the in-cluster configuration, then ~/.kube/config.
func LoadRESTConfig(path string) (*rest.Config, error) {
	if path == "" {
		return ctrl.GetConfig()
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err == nil && cfg.QPS == 0 {
		// As ctrl.GetConfig does: no client-side rate limit (client-go's default is 5
		// requests per second), kube-apiserver's flow control limits the operator.
		cfg.QPS = -1
	}
	return cfg, err
}
