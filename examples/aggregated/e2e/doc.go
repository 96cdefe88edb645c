// Package e2e proves the sample aggregated API server end to end: a real kube-apiserver
// (envtest) proxies impersonated clients through its aggregator to the sample server, whose
// handler chain enforces apf-operator's filter. It holds tests only; they need the envtest
// binaries (KUBEBUILDER_ASSETS, or `make envtest` in the repository).
package e2e
