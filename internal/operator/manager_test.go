package operator

import (
	"context"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
)

// TestNewRefusesInvalidOptions: New validates before it builds anything.
func TestNewRefusesInvalidOptions(t *testing.T) {
	o := NewOptions()
	o.Namespace, o.Enforcement = "x", "kernel"
	mgr, err := New(context.Background(), &rest.Config{Host: "https://127.0.0.1:1"}, o)
	if mgr != nil || err == nil || !strings.Contains(err.Error(), "--enforcement") {
		t.Fatalf("New with --enforcement=kernel: %v, %v; want no manager and an error naming the flag", mgr, err)
	}
}
