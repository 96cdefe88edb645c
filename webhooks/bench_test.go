package webhooks

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/index"
	"github.com/apf-operator/apf-operator/internal/validation"
)

// BenchmarkAdmission measures the whole admission handler (decode, validate against the cache,
// build the response) with n stored RequestPriority objects and n FlowSchemas, each FlowSchema
// referring to one RequestPriority, in a real controller-runtime informer cache with the
// indexes of internal/index. The informers are fed by an in-memory list and an idle watch
// instead of an API server, so the figures are those of the webhook alone. It reports the
// 50th and 99th percentile latency of one admission request in microseconds: they must not grow
// with n, since each check reads one index entry.
func BenchmarkAdmission(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		c := benchCache(b, n)
		access := validation.DefaultExemptAccess()
		rpHook := admission.WithValidator[*v1alpha1.RequestPriority](benchScheme(b),
			&RequestPriorityValidator{Objects: cacheObjects{reader: c}, Access: access})
		fsHook := admission.WithValidator[*v1alpha1.FlowSchema](benchScheme(b),
			&FlowSchemaValidator{Objects: cacheObjects{reader: c}, Access: access})

		// A new level (unique-level lookup), an update of a referred-to level (reverse lookup)
		// and a FlowSchema with a distinguisher (reference lookup).
		created := benchRP("new", int32(10*n+5), 64)
		updated := benchRP("rp-500", benchLevel(500), 32)
		fs := benchFS("new", "rp-700")
		cases := []struct {
			name string
			hook *admission.Webhook
			req  admission.Request
		}{
			{"RequestPriority/create", rpHook, benchRequest(b, admissionv1.Create, created, nil)},
			{"RequestPriority/update", rpHook, benchRequest(b, admissionv1.Update, updated, benchRP("rp-500", benchLevel(500), 64))},
			{"FlowSchema/create", fsHook, benchRequest(b, admissionv1.Create, fs, nil)},
		}
		for _, bc := range cases {
			b.Run(fmt.Sprintf("%s/objects=%d", bc.name, n), func(b *testing.B) {
				benchHandle(b, bc.hook, bc.req)
			})
		}
	}
}

// benchHandle runs the handler b.N times and reports latency percentiles.
func benchHandle(b *testing.B, hook *admission.Webhook, req admission.Request) {
	ctx := context.Background()
	if resp := hook.Handle(ctx, req); !resp.Allowed {
		b.Fatalf("Benchmark request denied: %v", resp.Result)
	}
	latencies := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		resp := hook.Handle(ctx, req)
		latencies = append(latencies, time.Since(start))
		if !resp.Allowed {
			b.Fatalf("Request denied: %v", resp.Result)
		}
	}
	b.StopTimer()
	slices.Sort(latencies)
	b.ReportMetric(float64(percentile(latencies, 0.50).Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(percentile(latencies, 0.99).Nanoseconds())/1e3, "p99-µs")
}

// percentile returns the p-th latency of a sorted slice.
func percentile(sorted []time.Duration, p float64) time.Duration {
	return sorted[min(len(sorted)-1, int(p*float64(len(sorted))))]
}

func benchLevel(i int) int32 { return int32(10 * (i + 1)) }

func benchRP(name string, level, queues int32) *v1alpha1.RequestPriority {
	rp := queuedRP(name, level, queues, 4)
	rp.TypeMeta = metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "RequestPriority"}
	rp.ResourceVersion = "1"
	return rp
}

func benchFS(name, rp string) *v1alpha1.FlowSchema {
	fs := flowSchema(name, rp, &v1alpha1.FlowDistinguisher{Source: v1alpha1.SourceUser})
	fs.TypeMeta = metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "FlowSchema"}
	fs.ResourceVersion = "1"
	return fs
}

// benchRequest builds an admission request from a system:masters user.
func benchRequest(b *testing.B, op admissionv1.Operation, obj, old runtime.Object) admission.Request {
	raw := func(o runtime.Object) runtime.RawExtension {
		if o == nil {
			return runtime.RawExtension{}
		}
		data, err := json.Marshal(o)
		if err != nil {
			b.Fatal(err)
		}
		return runtime.RawExtension{Raw: data}
	}
	return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UID: "bench", Operation: op, Object: raw(obj), OldObject: raw(old),
		UserInfo: authenticationv1.UserInfo{Username: "admin", Groups: []string{validation.MastersGroup}},
	}}
}

func benchScheme(b *testing.B) *runtime.Scheme {
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		b.Fatal(err)
	}
	return s
}

// benchCache starts a controller-runtime informer cache holding n RequestPriority objects
// (rp-i at level 10*(i+1)) and n FlowSchemas (fs-i referring to rp-i), with the indexes
// registered, and stops it when the benchmark ends.
func benchCache(b *testing.B, n int) cache.Cache {
	rps := &v1alpha1.RequestPriorityList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}
	fss := &v1alpha1.FlowSchemaList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}
	for i := 0; i < n; i++ {
		rps.Items = append(rps.Items, *benchRP(fmt.Sprintf("rp-%d", i), benchLevel(i), 64))
		fss.Items = append(fss.Items, *benchFS(fmt.Sprintf("fs-%d", i), fmt.Sprintf("rp-%d", i)))
	}
	scheme := benchScheme(b)
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(v1alpha1.GroupVersion.WithKind("RequestPriority"), meta.RESTScopeRoot)
	mapper.Add(v1alpha1.GroupVersion.WithKind("FlowSchema"), meta.RESTScopeRoot)
	c, err := cache.New(&rest.Config{Host: "http://127.0.0.1:1"}, cache.Options{
		Scheme: scheme, Mapper: mapper, HTTPClient: &http.Client{},
		NewInformer: func(_ toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
			list := runtime.Object(rps)
			if _, ok := obj.(*v1alpha1.FlowSchema); ok {
				list = fss
			}
			return toolscache.NewSharedIndexInformer(listOnly{&toolscache.ListWatch{
				ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
					return list.DeepCopyObject(), nil
				},
				WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
					return watch.NewFake(), nil
				},
			}}, obj, resync, indexers)
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := index.Register(ctx, c); err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = c.Start(ctx)
	}()
	b.Cleanup(func() { cancel(); <-done })
	if !c.WaitForCacheSync(ctx) {
		b.Fatal("Cache did not sync")
	}
	return c
}

// listOnly is an in-memory ListerWatcher that tells the reflector to list, then watch, instead
// of streaming the initial list through the watch (which an idle fake watch never ends).
type listOnly struct{ *toolscache.ListWatch }

// IsWatchListSemanticsUnSupported is read by client-go's reflector.
func (listOnly) IsWatchListSemanticsUnSupported() bool { return true }
