// Package managerbase builds the controller-runtime manager that every apf-operator process
// and every test starts from: the scheme, the cache transform that drops the managedFields the
// operator never reads, and the cache field indexes the webhooks and reconcilers query. The
// operator's wiring (internal/operator) and the in-package suites of controllers/ and webhooks/
// (which cannot import internal/operator without an import cycle) call New, so that no test
// runs a manager without the production cache.
package managerbase

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/index"
)

// Scheme returns a new scheme holding client-go's kinds and the operator's API.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(flowv1.AddToScheme(s))
	return s
}

// New creates a manager for cfg from opts, with the operator's scheme (unless opts sets one),
// CacheTransform as the cache's default transform, and the field indexes of internal/index.
// A caller that sets a different DefaultTransform gets an error: the production cache is not
// optional.
func New(ctx context.Context, cfg *rest.Config, opts ctrl.Options) (ctrl.Manager, error) {
	if opts.Scheme == nil {
		opts.Scheme = Scheme()
	}
	if opts.Cache.DefaultTransform != nil {
		return nil, fmt.Errorf("the manager's cache transform is managerbase.CacheTransform; do not set another")
	}
	opts.Cache.DefaultTransform = CacheTransform
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return nil, fmt.Errorf("creating the manager: %w", err)
	}
	if err := index.Register(ctx, mgr.GetFieldIndexer()); err != nil {
		return nil, fmt.Errorf("registering cache indexes: %w", err)
	}
	return mgr, nil
}
