package apf

import (
	"context"
	"errors"

	"github.com/go-logr/logr"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/apf-operator/apf-operator/internal/apf/source"
)

// InformerSource feeds a Filter the RequestPriority and FlowSchema objects of a cluster,
// watched through client-go dynamic informers (no controller-runtime). Bursts of changes are
// coalesced, and status-only updates are ignored.
//
// The embedding server's service account needs get, list and watch on requestpriorities and
// flowschemas in the flowcontrol.apf-operator.io API group.
type InformerSource struct{ src *source.Source }

// NewInformerSource returns a source for the cluster cfg points at, applying every
// configuration to f. Call Run to start it.
func NewInformerSource(cfg *rest.Config, f *Filter, log logr.Logger) (*InformerSource, error) {
	if cfg == nil {
		return nil, errors.New("apf.NewInformerSource: cfg is nil: pass the rest.Config of the cluster " +
			"holding the RequestPriority and FlowSchema objects (rest.InClusterConfig in a pod)")
	}
	if f == nil {
		return nil, errors.New("apf.NewInformerSource: the Filter is nil: create it with apf.New first")
	}
	src, err := source.New(cfg, f.engine.Update, log)
	if err != nil {
		return nil, err
	}
	return &InformerSource{src: src}, nil
}

// NewInformerSourceForClient is NewInformerSource with a ready-made dynamic client (for
// example a fake one in tests).
func NewInformerSourceForClient(client dynamic.Interface, f *Filter, log logr.Logger) (*InformerSource, error) {
	if client == nil || f == nil {
		return nil, errors.New("apf.NewInformerSourceForClient: the client and the Filter must not be nil")
	}
	return &InformerSource{src: source.NewForClient(client, f.engine.Update, log)}, nil
}

// Run watches until ctx is done, then returns nil. It returns an error if called twice or if
// ctx ends before the informers sync. Until the first sync the Filter keeps its previous
// configuration (the backstops, for a new Filter).
func (s *InformerSource) Run(ctx context.Context) error { return s.src.Run(ctx) }

// HasSynced reports whether the informers have synced and the first configuration has been
// applied; wire it into the server's readiness check.
func (s *InformerSource) HasSynced() bool { return s.src.HasSynced() }
