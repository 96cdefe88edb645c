// Package scale holds the operator's scale test (scale_test.go): a bulk apply of many
// RequestPriority and FlowSchema objects, concurrently and through the real admission webhook,
// against a real kube-apiserver (envtest) and the whole operator in process (status
// reconcilers, projector, webhooks). It measures the time to converge, the operator's API
// writes per object (from the kube-apiserver's audit log), its heap and RSS, and the webhook's
// latency, and asserts the goals of docs/scale.md. `make test` runs it at a tenth of the size;
// `make scale` runs it at full size and prints the figures.
package scale
