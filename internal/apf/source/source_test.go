package source_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apf/source"
)

func requestPriority(name string, level int32) *flowv1.RequestPriority {
	return &flowv1.RequestPriority{
		TypeMeta:   metav1.TypeMeta{APIVersion: flowv1.GroupVersion.String(), Kind: "RequestPriority"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: flowv1.RequestPrioritySpec{PriorityLevel: level, AssuredConcurrencyShares: ptr.To[int32](10),
			QueuesPerWidth: ptr.To[int32](64), HandSize: ptr.To[int32](4), QueueLengthLimit: ptr.To[int32](50)}}
}

func flowSchema(name string, mp int32, priority, user string) *flowv1.FlowSchema {
	return &flowv1.FlowSchema{
		TypeMeta:   metav1.TypeMeta{APIVersion: flowv1.GroupVersion.String(), Kind: "FlowSchema"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: flowv1.FlowSchemaSpec{MatchingPriority: mp, RequestPriority: flowv1.RequestPriorityReference{Name: priority},
			FlowDistinguisher: &flowv1.FlowDistinguisher{Source: flowv1.SourceUser},
			Match:             []flowv1.Conjunction{{And: []flowv1.AtomicTest{{Equals: &flowv1.ValueTest{Field: flowv1.FieldUser, Value: user}}}}}}}
}

func toUnstructured(t *testing.T, obj runtime.Object) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

// recorder collects the configurations a Source applies.
type recorder struct {
	mu      sync.Mutex
	configs []*effective.Config
	changed chan struct{}
}

func newRecorder() *recorder { return &recorder{changed: make(chan struct{}, 1)} }

func (r *recorder) apply(cfg *effective.Config) {
	r.mu.Lock()
	r.configs = append(r.configs, cfg)
	r.mu.Unlock()
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.configs)
}

func (r *recorder) latest() *effective.Config {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.configs) == 0 {
		return nil
	}
	return r.configs[len(r.configs)-1]
}

// waitFor waits until the latest applied configuration satisfies cond.
func (r *recorder) waitFor(t *testing.T, what string, cond func(*effective.Config) bool) *effective.Config {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		if cfg := r.latest(); cfg != nil && cond(cfg) {
			return cfg
		}
		select {
		case <-r.changed:
		case <-deadline:
			t.Fatalf("timed out waiting for a configuration where %s; latest: %+v", what, r.latest())
		}
	}
}

// waitQuiet waits until no configuration has been applied for d: an event that arrives while
// a recomputation already covers it still causes one more.
func (r *recorder) waitQuiet(t *testing.T, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for n := r.count(); ; {
		time.Sleep(d)
		m := r.count()
		if m == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("configurations keep being applied")
		}
		n = m
	}
}

// schemaAt returns the priority name of the in-effect schema name, or "".
func schemaAt(cfg *effective.Config, name string) string {
	for _, s := range cfg.Schemas {
		if s.Name == name {
			return s.Priority.Name
		}
	}
	return ""
}

// runSource runs the Source made by newSource (given the recorder's apply) until the test ends.
func runSource(t *testing.T, newSource func(apply func(*effective.Config)) *source.Source, debounce time.Duration) (*source.Source, *recorder) {
	t.Helper()
	rec := newRecorder()
	src := newSource(rec.apply)
	src.Debounce = debounce
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- src.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run returned %v after cancellation, want nil", err)
		}
	})
	return src, rec
}

// forClient makes Sources on client.
func forClient(t *testing.T, client dynamic.Interface) func(func(*effective.Config)) *source.Source {
	return func(apply func(*effective.Config)) *source.Source {
		return source.NewForClient(client, apply, testr.New(t))
	}
}

func create(t *testing.T, client dynamic.Interface, gvr schema.GroupVersionResource, obj runtime.Object) {
	t.Helper()
	if _, err := client.Resource(gvr).Create(context.Background(), toUnstructured(t, obj), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
