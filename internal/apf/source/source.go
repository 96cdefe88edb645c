// Package source feeds an apf.Engine the live configuration of a cluster: it watches the
// RequestPriority and FlowSchema objects through client-go dynamic informers (no
// controller-runtime), and on every change recomputes the effective configuration
// (effective.Compute: actual objects plus backstops) and hands it to a callback, typically
// Engine.Update.
//
// Changes are coalesced: the first event after a quiet period starts a short delay (Debounce),
// and one recomputation then covers every event of that delay, so applying a hundred objects
// at once recompiles the classifier a handful of times, not a hundred. Updates that leave
// metadata.generation unchanged (status writes by the operator, label edits) cause none.
package source

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
)

// The resources the Source watches.
var (
	RequestPriorities = flowv1.GroupVersion.WithResource("requestpriorities")
	FlowSchemas       = flowv1.GroupVersion.WithResource("flowschemas")
)

// DefaultDebounce is how long a Source waits after a change for more changes before it
// recomputes the configuration.
const DefaultDebounce = 5 * time.Millisecond

// Source watches the configuration objects and applies their effective configuration.
type Source struct {
	// Debounce is the coalescing delay; set it before Run. Zero means DefaultDebounce.
	Debounce time.Duration

	apply      func(*effective.Config)
	log        logr.Logger
	factory    dynamicinformer.DynamicSharedInformerFactory
	priorities cache.SharedIndexInformer
	schemas    cache.SharedIndexInformer
	changed    chan struct{} // capacity 1: a pending change
	synced     atomic.Bool
	running    atomic.Bool
}

// New returns a Source for the cluster cfg points at. apply receives every effective
// configuration, first once the informers have synced, then after each change; it is called
// from Run's goroutine, one call at a time.
func New(cfg *rest.Config, apply func(*effective.Config), log logr.Logger) (*Source, error) {
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the dynamic client of the flow-control configuration source: %w", err)
	}
	return NewForClient(client, apply, log), nil
}

// NewForClient is New with a ready-made dynamic client.
func NewForClient(client dynamic.Interface, apply func(*effective.Config), log logr.Logger) *Source {
	factory := dynamicinformer.NewDynamicSharedInformerFactory(client, 0)
	s := &Source{
		apply:      apply,
		log:        log,
		factory:    factory,
		priorities: factory.ForResource(RequestPriorities).Informer(),
		schemas:    factory.ForResource(FlowSchemas).Informer(),
		changed:    make(chan struct{}, 1),
	}
	return s
}

// HasSynced reports whether the informers have synced and the first configuration has been
// applied.
func (s *Source) HasSynced() bool { return s.synced.Load() }

// Run watches until ctx is done, then stops the informers and returns nil. It returns an error
// if it is called twice, without an apply callback, or if ctx ends before the informers sync.
func (s *Source) Run(ctx context.Context) error {
	if s.apply == nil {
		return errors.New("the flow-control configuration source has no apply callback: pass one to New")
	}
	if !s.running.CompareAndSwap(false, true) {
		return errors.New("the flow-control configuration source is already running")
	}
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { s.notify() },
		UpdateFunc: s.onUpdate,
		DeleteFunc: func(any) { s.notify() },
	}
	for _, inf := range []cache.SharedIndexInformer{s.priorities, s.schemas} {
		if _, err := inf.AddEventHandler(handler); err != nil {
			return fmt.Errorf("watching the flow-control configuration: %w", err)
		}
	}
	s.factory.Start(ctx.Done())
	defer s.factory.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), s.priorities.HasSynced, s.schemas.HasSynced) {
		return fmt.Errorf("the RequestPriority and FlowSchema informers did not sync: %w", context.Cause(ctx))
	}
	s.drain()
	s.recompute()
	s.synced.Store(true)
	s.log.Info("Flow-control configuration source synced")
	return s.loop(ctx)
}

// loop recomputes the configuration after each burst of changes.
func (s *Source) loop(ctx context.Context) error {
	delay := s.Debounce
	if delay <= 0 {
		delay = DefaultDebounce
	}
	timer := time.NewTimer(delay)
	timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.changed:
		}
		timer.Reset(delay)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-timer.C:
		}
		s.drain() // the recomputation below covers the changes of the delay
		s.recompute()
	}
}

// notify records a pending change without blocking the informer.
func (s *Source) notify() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

func (s *Source) drain() {
	select {
	case <-s.changed:
	default:
	}
}

// onUpdate ignores updates that leave the spec alone: the API server bumps metadata.generation
// on every spec change of these kinds (they have a status subresource), and the effective
// configuration depends only on specs, names and creation timestamps.
func (s *Source) onUpdate(oldObj, newObj any) {
	o, ok1 := oldObj.(*unstructured.Unstructured)
	n, ok2 := newObj.(*unstructured.Unstructured)
	if ok1 && ok2 && o.GetGeneration() == n.GetGeneration() && o.GetGeneration() != 0 {
		return
	}
	s.notify()
}

// recompute converts the cached objects, computes the effective configuration and applies it.
func (s *Source) recompute() {
	rps := convertAll[flowv1.RequestPriority](s.priorities.GetStore().List(), s.log)
	fss := convertAll[flowv1.FlowSchema](s.schemas.GetStore().List(), s.log)
	cfg := effective.Compute(rps, fss)
	s.apply(cfg)
	s.log.V(1).Info("Applied the effective flow-control configuration",
		"requestPriorities", len(rps), "flowSchemas", len(fss), "inEffect", len(cfg.Schemas))
}

// convertAll converts cached unstructured objects to typed ones. An object that does not
// convert (possible only if the stored object disagrees with the Go types) is skipped with an
// error log, so the rest of the configuration still applies.
func convertAll[T any](objs []any, log logr.Logger) []T {
	out := make([]T, 0, len(objs))
	for _, obj := range objs {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		var typed T
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.UnstructuredContent(), &typed); err != nil {
			log.Error(err, "Ignoring a flow-control object that does not convert", "kind", u.GetKind(), "name", u.GetName())
			continue
		}
		out = append(out, typed)
	}
	return out
}
