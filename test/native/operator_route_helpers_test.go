package native_test

import (
	"k8s.io/client-go/rest"

	"github.com/apf-operator/apf-operator/internal/native"
)

// operatorRESTConfig is the test operator's client configuration: the admin's, impersonating
// cfg.serviceAccount with the groups kube-apiserver gives a service account's token.
func operatorRESTConfig(cfg operatorConfig) *rest.Config {
	sa := cfg.serviceAccount
	if sa == nil {
		return restConfig
	}
	out := rest.CopyConfig(restConfig)
	out.Impersonate = rest.ImpersonationConfig{UserName: sa.Username(), Groups: serviceAccountGroups(sa)}
	return out
}

// serviceAccountGroups are the groups of a service account's token.
func serviceAccountGroups(sa *native.ServiceAccount) []string {
	return []string{"system:serviceaccounts", "system:serviceaccounts:" + sa.Namespace, "system:authenticated"}
}

// routed is the service account the projection routes, nil for none.
func (cfg operatorConfig) routed() *native.ServiceAccount {
	if cfg.noRoute {
		return nil
	}
	return cfg.serviceAccount
}
