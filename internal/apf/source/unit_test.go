package source_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apf/source"
)

func fakeClient() *dynamicfake.FakeDynamicClient {
	return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		source.RequestPriorities: "RequestPriorityList",
		source.FlowSchemas:       "FlowSchemaList",
	})
}

// TestSourceCoalescesChanges: a burst of changes within the debounce delay is applied in one
// recomputation (or two, if the burst straddles the first delay), not one per object.
func TestSourceCoalescesChanges(t *testing.T) {
	client := fakeClient()
	src, rec := runSource(t, forClient(t, client), 300*time.Millisecond)
	rec.waitFor(t, "the initial configuration is applied", func(*effective.Config) bool { return true })
	waitSynced(t, src)
	before := rec.count()

	create(t, client, source.RequestPriorities, requestPriority("tenants", 100))
	const n = 20
	for i := 0; i < n; i++ {
		create(t, client, source.FlowSchemas, flowSchema(fmt.Sprintf("fs-%02d", i), int32(i), "tenants", fmt.Sprintf("u%d", i)))
	}
	rec.waitFor(t, "all FlowSchemas are in effect", func(c *effective.Config) bool { return len(c.Schemas) == n })
	if applied := rec.count() - before; applied > 2 {
		t.Errorf("%d configurations applied for a burst of %d changes; want at most 2", applied, n+1)
	}
}

func TestSourceRunTwice(t *testing.T) {
	src := source.NewForClient(fakeClient(), func(*effective.Config) {}, logr.Discard())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- src.Run(ctx) }()
	deadline := time.Now().Add(10 * time.Second)
	for !src.HasSynced() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if err := src.Run(ctx); err == nil {
		t.Error("a second Run returned nil, want an error")
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run after cancellation: %v", err)
	}
}

func TestSourceRunWithoutApply(t *testing.T) {
	src := source.NewForClient(fakeClient(), nil, logr.Discard())
	if err := src.Run(context.Background()); err == nil {
		t.Error("Run without an apply callback returned nil, want an error")
	}
}

func TestSourceRunEndsBeforeSync(t *testing.T) {
	client := fakeClient()
	client.PrependReactor("list", "*", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("the API server is unreachable")
	})
	src := source.NewForClient(client, func(*effective.Config) { t.Error("applied without sync") }, logr.Discard())
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := src.Run(ctx); err == nil {
		t.Error("Run that never synced returned nil, want the sync error")
	}
	if src.HasSynced() {
		t.Error("HasSynced is true without sync")
	}
}

// waitSynced waits for HasSynced, which turns true once the first apply has returned (the
// recorder sees the apply a moment earlier).
func waitSynced(t *testing.T, src *source.Source) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !src.HasSynced(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("HasSynced is still false 5s after the first configuration was applied")
		}
	}
}
