// Package server is a sample aggregated API server built on k8s.io/apiserver that enforces
// apf-operator's API Priority and Fairness filter: the demo.apf-operator.io/v1alpha1 widgets
// resource, kept in memory, served behind delegated authentication and authorization against
// kube-apiserver, with apf-operator's filter in the handler chain where upstream's
// WithPriorityAndFairness sits. The filter's configuration is the cluster's RequestPriority and
// FlowSchema objects, watched through kube-apiserver; its metrics are on the server's /metrics.
//
// It needs no etcd: the widgets live in a map and are lost on restart.
package server
