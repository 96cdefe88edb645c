package apf_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/pkg/apf"
)

// tenantObjects are a RequestPriority and a FlowSchema sending members of group "tenants" to
// it, one flow per namespace.
func tenantObjects() ([]v1alpha1.RequestPriority, []v1alpha1.FlowSchema) {
	rp := v1alpha1.RequestPriority{ObjectMeta: metav1.ObjectMeta{Name: "tenant-workloads"},
		Spec: v1alpha1.RequestPrioritySpec{PriorityLevel: 5000, AssuredConcurrencyShares: ptr.To[int32](20),
			QueuesPerWidth: ptr.To[int32](64), HandSize: ptr.To[int32](6), QueueLengthLimit: ptr.To[int32](50)}}
	fs := v1alpha1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: "tenant-workloads"},
		Spec: v1alpha1.FlowSchemaSpec{MatchingPriority: 800000,
			RequestPriority:   v1alpha1.RequestPriorityReference{Name: "tenant-workloads"},
			FlowDistinguisher: &v1alpha1.FlowDistinguisher{Source: v1alpha1.SourceNamespace},
			Match: []v1alpha1.Conjunction{{And: []v1alpha1.AtomicTest{
				{SuperSet: &v1alpha1.SetTest{Field: v1alpha1.FieldGroups, Set: []string{"tenants"}}},
				{PatternMatch: &v1alpha1.PatternTest{Field: v1alpha1.FieldNamespace, Pattern: ".+"}}}}}}}
	return []v1alpha1.RequestPriority{rp}, []v1alpha1.FlowSchema{fs}
}

// A Filter in front of an API handler: the embedding server's authenticator puts the user in
// the context, the filter classifies and flow-controls, and the response names the
// classification.
func ExampleFilter_Handler() {
	f, err := apf.New(apf.Options{ServerConcurrencyLimit: 600, RequestTimeout: time.Minute})
	if err != nil {
		panic(err)
	}
	f.Update(tenantObjects())
	api := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "served") })
	authenticate := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx := apf.WithUser(r.Context(), "alice", []string{"tenants", "system:authenticated"})
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
	handler := authenticate(f.Handler(api))

	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/namespaces/team-a/pods", nil))
	fmt.Print(rec.Code, " ", rec.Body.String())
	fmt.Println(rec.Header().Get(apf.HeaderFlowSchema), rec.Header().Get(apf.HeaderRequestPriority))
	// Output:
	// 200 served
	// tenant-workloads tenant-workloads
}

// New reports an invalid option by name, with the fix.
func ExampleNew() {
	_, err := apf.New(apf.Options{})
	fmt.Println(err)
	// Output:
	// apf.Options.ServerConcurrencyLimit is 0: set it to the number of concurrent requests the server can serve, at least 1 (kube-apiserver's default is 600)
}

// Explain shows where a request would go, without serving it. Without identity a request is
// anonymous: the spoofable X-Remote-Group header plays no part.
func ExampleFilter_Explain() {
	f, err := apf.New(apf.Options{ServerConcurrencyLimit: 600})
	if err != nil {
		panic(err)
	}
	f.Update(tenantObjects())
	c := f.Explain(apf.Attributes{User: "alice", Groups: []string{"tenants"}, Verb: "list",
		Resource: "pods", Namespace: "team-a", ResourceRequest: true})
	fmt.Println(c.FlowSchema, c.RequestPriority, c.Distinguisher, c.Width)
	c = f.Explain(apf.Attributes{Verb: "get", Path: "/healthz"})
	fmt.Println(c.FlowSchema, c.RequestPriority)
	c = f.Explain(apf.Attributes{User: "root", Groups: []string{"system:masters"}, Verb: "get", Path: "/healthz"})
	fmt.Println(c.FlowSchema, c.Exempt)
	// Output:
	// tenant-workloads tenant-workloads team-a 1
	// non-top-backstop tenant-workloads
	// system-top true
}

// Serve flow-controls requests that a framework parsed itself; a rejection is a
// *RejectedError carrying the Retry-After.
func ExampleFilter_Serve() {
	f, err := apf.New(apf.Options{ServerConcurrencyLimit: 600, RetryAfter: 3 * time.Second})
	if err != nil {
		panic(err)
	}
	a := apf.Attributes{User: "bob", Groups: []string{"system:authenticated"}, Verb: "create",
		Resource: "configmaps", Namespace: "default", ResourceRequest: true}
	err = f.Serve(context.Background(), &a, func(c apf.Classification) {
		fmt.Println("serving at", c.RequestPriority, "width", c.Width)
	})
	var rejected *apf.RejectedError
	if errors.As(err, &rejected) {
		fmt.Println("429, Retry-After:", rejected.RetryAfterSeconds())
	}
	// Output:
	// serving at workload-low width 2
}

// LoadManifests reads RequestPriority and FlowSchema manifests, such as the samples of
// config/samples, into a StaticSource.
func ExampleLoadManifests() {
	dir, err := os.MkdirTemp("", "apf-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	manifest := `apiVersion: flowcontrol.apf-operator.io/v1alpha1
kind: RequestPriority
metadata: {name: tenant-workloads}
spec: {priorityLevel: 5000, assuredConcurrencyShares: 20, queuesPerWidth: 1, queueLengthLimit: 50}
---
apiVersion: flowcontrol.apf-operator.io/v1alpha1
kind: FlowSchema
metadata: {name: tenants}
spec:
  matchingPriority: 800000
  requestPriority: {name: tenant-workloads}
  match:
  - and:
    - superSet: {field: groups, set: ["tenants"]}
`
	path := filepath.Join(dir, "apf.yaml")
	if err := os.WriteFile(path, []byte(manifest), 0o600); err != nil {
		panic(err)
	}
	src, err := apf.LoadManifests(path)
	if err != nil {
		panic(err)
	}
	f, err := apf.New(apf.Options{ServerConcurrencyLimit: 100})
	if err != nil {
		panic(err)
	}
	src.Apply(f)
	fmt.Println(len(src.RequestPriorities), len(src.FlowSchemas),
		f.Explain(apf.Attributes{User: "carol", Groups: []string{"tenants"}, Verb: "get", Path: "/version"}).FlowSchema)
	// Output:
	// 1 1 tenants
}

// An InformerSource keeps a Filter in step with the RequestPriority and FlowSchema objects of
// a cluster. (Not run: it needs a cluster.)
func ExampleNewInformerSource() {
	f, err := apf.New(apf.Options{ServerConcurrencyLimit: 600})
	if err != nil {
		panic(err)
	}
	cfg, err := rest.InClusterConfig()
	if err != nil {
		panic(err)
	}
	src, err := apf.NewInformerSource(cfg, f, logr.Discard())
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		if err := src.Run(ctx); err != nil {
			fmt.Println(err)
		}
	}()
	// Report ready once src.HasSynced(); until then the Filter enforces the backstops.
}
