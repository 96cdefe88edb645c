// Package operator assembles the apf-operator manager: the one place the operator is wired.
//
// New builds a controller-runtime manager from Options through managerbase.New (scheme, cache
// transform, cache indexes), registers every reconciler (controllers.SetupWithManager), the
// health checks, and the validating webhooks with their certificate rotation, exactly as the
// `apf-operator manager` command runs it; Run builds it and runs it until the context ends.
// The command only parses its flags into Options (NewOptions holds their defaults), and every
// test that runs an operator in-process calls New, so tests run the production wiring.
//
// Files: options.go (the settings and their defaults), validate.go (Validate), manager.go
// (New, Run and the manager's own options), webhooks.go (webhook registration and readiness),
// certs.go (in-process certificate rotation), webhooktls.go (the webhook server's client CA),
// eventratelimit.go (the events webhook's engine), restconfig.go (the kubeconfig).
package operator
