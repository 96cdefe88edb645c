package webhooks

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// TestGateWebhookMuxWhileStarting reads the server's mux while it starts, as the webhook
// builder does when the webhooks are registered on a running manager (under -race this
// fails if the read races with the server's defaulting), and checks that a handler
// registered through the gate lands in that mux.
func TestGateWebhookMuxWhileStarting(t *testing.T) {
	server := Gate(webhook.Options{Port: -1}) // Start only applies the defaults, then returns.
	done := make(chan error, 1)
	go func() { done <- server.Start(context.Background()) }()
	mux := server.WebhookMux()
	if mux == nil {
		t.Fatal("WebhookMux is nil before Start")
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	server.Register("/validate-x", http.NotFoundHandler())
	if _, pattern := mux.Handler(&http.Request{URL: &url.URL{Path: "/validate-x"}}); pattern != "/validate-x" {
		t.Errorf("the handler registered through the gate is not in WebhookMux (pattern %q)", pattern)
	}
	if server.WebhookMux() != mux {
		t.Error("WebhookMux changed after Start")
	}
}
