package source_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/classify"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apf/request"
	"github.com/apf-operator/apf-operator/internal/apf/source"
	"github.com/apf-operator/apf-operator/test/envtestutil"
)

// TestSourceAgainstAPIServer runs the Source against a real kube-apiserver with the project's
// CRDs: the effective configuration follows creations, spec changes and deletions.
func TestSourceAgainstAPIServer(t *testing.T) {
	env, err := envtestutil.NewEnvironment()
	if err != nil {
		t.Fatal(err)
	}
	restCfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting envtest: %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	client := dynamic.NewForConfigOrDie(restCfg)
	ctx := context.Background()

	src, rec := runSource(t, func(apply func(*effective.Config)) *source.Source {
		src, err := source.New(restCfg, apply, testr.New(t))
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		return src
	}, 0)
	cfg := rec.waitFor(t, "the initial configuration is applied", func(*effective.Config) bool { return true })
	if len(cfg.Schemas) != 0 || cfg.CatchAll.Priority.Name != effective.BackstopLowName {
		t.Fatalf("initial configuration of an empty cluster: %d schemas, catch-all at %q; want backstops only",
			len(cfg.Schemas), cfg.CatchAll.Priority.Name)
	}
	waitSynced(t, src)

	create(t, client, source.RequestPriorities, requestPriority("tenants", 100))
	create(t, client, source.FlowSchemas, flowSchema("tenant-a", 1000, "tenants", "tenant-a"))
	cfg = rec.waitFor(t, "FlowSchema tenant-a is in effect at tenants", func(c *effective.Config) bool {
		return schemaAt(c, "tenant-a") == "tenants"
	})
	if st := cfg.RequestPriorityStatus["tenants"]; !st.InEffect || st.FlowSchemas != 1 {
		t.Errorf("status of tenants: %+v; want in effect with 1 FlowSchema", st)
	}

	var r classify.Result
	classify.Compile(cfg).Classify(&request.Attributes{User: "tenant-a", Verb: "get", Path: "/healthz"}, &r)
	if r.Schema.Name != "tenant-a" || r.Distinguisher != "tenant-a" {
		t.Errorf("a request of tenant-a classifies to %q (distinguisher %q) under the applied configuration", r.Schema.Name, r.Distinguisher)
	}

	// A status write (no spec change, same generation) recomputes nothing.
	rec.waitQuiet(t, 200*time.Millisecond)
	applied := rec.count()
	fs, err := client.Resource(source.FlowSchemas).Get(ctx, "tenant-a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(fs.Object, int64(1), "status", "observedGeneration"); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Resource(source.FlowSchemas).UpdateStatus(ctx, fs, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // 60 times the debounce delay
	if rec.count() != applied {
		t.Errorf("a status write caused %d recomputations, want 0", rec.count()-applied)
	}

	// A spec change is applied.
	fs, err = client.Resource(source.FlowSchemas).Get(ctx, "tenant-a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(fs.Object, int64(7), "spec", "matchingPriority"); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Resource(source.FlowSchemas).Update(ctx, fs, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	rec.waitFor(t, "tenant-a has matchingPriority 7", func(c *effective.Config) bool {
		return len(c.Schemas) == 1 && c.Schemas[0].MatchingPriority == 7
	})

	// Deleting the RequestPriority takes the FlowSchema out of effect.
	if err := client.Resource(source.RequestPriorities).Delete(ctx, "tenants", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg = rec.waitFor(t, "tenant-a is out of effect", func(c *effective.Config) bool { return len(c.Schemas) == 0 })
	if st := cfg.FlowSchemaStatus["tenant-a"]; st.InEffect || st.Reason != flowv1.ReasonRequestPriorityNotFound {
		t.Errorf("status of tenant-a after its RequestPriority was deleted: %+v", st)
	}
}
