package native_test

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	eventsv1 "k8s.io/api/events/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/controllers"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/defaults"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/internal/operator"
	"github.com/apf-operator/apf-operator/test/harness"
)

// waitTimeout bounds every wait for the operator or kube-apiserver; both normally react in
// milliseconds, the margin is for a loaded 2-core machine running the race detector.
const waitTimeout = 30 * time.Second

// Response headers in which kube-apiserver names the native FlowSchema and
// PriorityLevelConfiguration that classified a request (by UID).
const (
	headerFlowSchemaUID    = "X-Kubernetes-PF-FlowSchema-UID"
	headerPriorityLevelUID = "X-Kubernetes-PF-PriorityLevel-UID"
)

// operatorConfig adjusts a test operator.
type operatorConfig struct {
	manageDefaults bool
	// resync is the defaults reconciler's resync period (0: the operator's default).
	resync time.Duration
	// syncPeriod, when set, is the cache's informer resync period.
	syncPeriod *time.Duration
	// serviceAccount, when set, is the operator's service account: its client impersonates it
	// and the projection routes its requests (operator_route_test.go); unset, it is the admin.
	serviceAccount *native.ServiceAccount
	// noRoute keeps the impersonation but gives the projection no service account.
	noRoute bool
	// seatsPeriod is how often the operator reads kube-apiserver's /metrics (0: its default).
	seatsPeriod time.Duration
	// maxSeatLoss is --native-max-seat-loss-percent; nil: 90, so that the tests' levels fit the
	// share budget of this small kube-apiserver (150 seats: 4 shares at the default 10%).
	maxSeatLoss *int32
}

// testOperator is a running operator with enforcement native: a manager without leader
// election or metrics server, with every reconciler of controllers.SetupWithManager.
type testOperator struct {
	// writes counts the successful writes of the operator's client (objects and status);
	// written lists them, for failure messages.
	writes  atomic.Int64
	mu      sync.Mutex
	written []string
}

func (op *testOperator) record(what string) {
	op.writes.Add(1)
	op.mu.Lock()
	defer op.mu.Unlock()
	op.written = append(op.written, what)
}

// writesSince lists the writes after the first n.
func (op *testOperator) writesSince(n int64) []string {
	op.mu.Lock()
	defer op.mu.Unlock()
	return append([]string(nil), op.written[n:]...)
}

// startOperator starts an operator through internal/operator, as production wires it, and
// returns once its cache is synced; it stops when the test ends.
func startOperator(t testing.TB, cfg operatorConfig) *testOperator {
	t.Helper()
	op := &testOperator{}
	ctx, cancel := context.WithCancel(context.Background())
	mgr, err := operator.New(ctx, operatorRESTConfig(cfg), cfg.options(op))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("operator stopped with %v", err)
		}
	})
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		t.Fatal("the operator's cache did not sync")
	}
	return op
}

// options are the operator's options for cfg: production's with enforcement native, without
// leader election, webhooks or metrics server, its writes counted by op.
func (cfg operatorConfig) options(op *testOperator) operator.Options {
	o := operator.NewOptions()
	o.LeaderElection.Enabled, o.Webhooks.Enabled = false, false
	o.MetricsBindAddress, o.HealthProbeBindAddress = "0", "0"
	o.Enforcement = controllers.EnforcementNative
	// The backstop is projected (the explicit --native-unmatched=operator), so that every
	// request is classified by the projection and these tests can compare each one with the
	// operator's classifier; test/donoharm runs the default.
	o.NativeUnmatched = native.UnmatchedOperator
	o.ManageDefaults = cfg.manageDefaults
	if cfg.resync != 0 {
		o.DefaultsResync = cfg.resync
	}
	if sa := cfg.routed(); sa != nil {
		o.Namespace, o.ServiceAccount = sa.Namespace, sa.Name
	}
	o.NativeMaxSeatLossPercent = int(*cmp.Or(cfg.maxSeatLoss, ptr.To[int32](90)))
	o.Testing = operator.TestingOptions{Registerer: prometheus.NewRegistry(), SkipNameValidation: true,
		NativeSeatsPeriod: cfg.seatsPeriod, CacheSyncPeriod: cfg.syncPeriod, NewClient: op.newClient}
	return o
}

// newClient wraps the manager's client to count its successful writes.
func (op *testOperator) newClient(cfg *rest.Config, o client.Options) (client.Client, error) {
	inner, err := client.NewWithWatch(cfg, o)
	if err != nil {
		return nil, err
	}
	counted := func(verb string, obj client.Object, err error) error {
		if err == nil {
			op.record(fmt.Sprintf("%s %T %s", verb, obj, obj.GetName()))
		}
		return err
	}
	return interceptor.NewClient(inner, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			return counted("create", obj, c.Create(ctx, obj, opts...))
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			return counted("update", obj, c.Update(ctx, obj, opts...))
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
			return counted("patch", obj, c.Patch(ctx, obj, p, opts...))
		},
		Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			err := c.Apply(ctx, obj, opts...)
			if err == nil {
				name := "?"
				if named, ok := obj.(interface{ GetName() *string }); ok && named.GetName() != nil {
					name = *named.GetName()
				} else if named, ok := obj.(interface{ GetName() string }); ok {
					name = named.GetName()
				}
				op.record(fmt.Sprintf("apply %T %s", obj, name))
			}
			return err
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			return counted("delete", obj, c.Delete(ctx, obj, opts...))
		},
		DeleteAllOf: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteAllOfOption) error {
			return counted("deleteAllOf", obj, c.DeleteAllOf(ctx, obj, opts...))
		},
		SubResourceCreate: func(ctx context.Context, c client.Client, sub string, obj, subObj client.Object, opts ...client.SubResourceCreateOption) error {
			return counted("create "+sub, obj, c.SubResource(sub).Create(ctx, obj, subObj, opts...))
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			return counted("update "+sub, obj, c.SubResource(sub).Update(ctx, obj, opts...))
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			return counted("patch "+sub, obj, c.SubResource(sub).Patch(ctx, obj, p, opts...))
		},
		SubResourceApply: func(ctx context.Context, c client.Client, sub string, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
			err := c.SubResource(sub).Apply(ctx, obj, opts...)
			if err == nil {
				op.record(fmt.Sprintf("apply %s %T", sub, obj))
			}
			return err
		},
	}), nil
}

// resetCluster deletes every RequestPriority and FlowSchema of ours and waits until they are
// gone. No operator may be running. The native objects stay: the next test's operator deletes
// the ones its configuration no longer projects and keeps the others (the backstop's, when the
// lowest level is the same). Deleting and re-creating them in every test would make
// kube-apiserver write each one's Dangling condition again, and it delays a FlowSchema's status
// writes by 30 to 75 seconds once there were more than five in a minute.
func resetCluster(t testing.TB) {
	t.Helper()
	ctx := context.Background()
	for _, obj := range []client.Object{&flowv1.RequestPriority{}, &flowv1.FlowSchema{}} {
		if err := k8s.DeleteAllOf(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	harness.Eventually(t, waitTimeout, "the check in resetCluster", func() error {
		var rps flowv1.RequestPriorityList
		var fss flowv1.FlowSchemaList
		for _, l := range []client.ObjectList{&rps, &fss} {
			if err := k8s.List(ctx, l); err != nil {
				return err
			}
		}
		if n := len(rps.Items) + len(fss.Items); n > 0 {
			return fmt.Errorf("%d objects left", n)
		}
		return nil
	})
}

// createDefaults creates the proposal's default objects (internal/defaults) as a user's, as
// levels of their own (not bound to kube-apiserver's): all of them, or only RequestPriority
// workload-low. Without the operator's marks, they are the user's configuration, projected as
// such. Every test's logically lowest level is workload-low, so
// the backstop FlowSchema apf.non-top-backstop keeps its spec from one test to the next. Tests
// create their configuration before they start the operator, whose first plan is then the
// final one.
func createDefaults(t testing.TB, all bool) {
	t.Helper()
	for _, d := range defaults.RequestPriorities() {
		if all || d.Name == effective.BackstopLowName {
			d.Labels, d.Annotations, d.Spec.NativeLevel = nil, nil, ""
			create(t, &d)
		}
	}
	if !all {
		return
	}
	for _, d := range defaults.FlowSchemas() {
		d.Labels, d.Annotations = nil, harness.ExemptRecordOnly(d.Annotations)
		create(t, &d)
	}
}

// create creates obj as the admin; it is deleted when the test ends if still there.
func create(t testing.TB, obj client.Object) {
	t.Helper()
	if err := k8s.Create(context.Background(), obj); err != nil {
		t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
	t.Cleanup(func() {
		if err := k8s.Delete(context.Background(), obj); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting %T %s: %v", obj, obj.GetName(), err)
		}
	})
}

// rp makes a RequestPriority with queuing (level > 0).
func rp(name string, level, shares, queues, hand, qlen int32) *flowv1.RequestPriority {
	out := &flowv1.RequestPriority{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: flowv1.RequestPrioritySpec{
		PriorityLevel: level, AssuredConcurrencyShares: &shares, QueuesPerWidth: &queues, QueueLengthLimit: &qlen}}
	if queues > 1 {
		out.Spec.HandSize = &hand
	}
	return out
}

// fs makes a FlowSchema; each argument is one conjunction.
func fs(name string, matchingPriority int32, target string, conjunctions ...flowv1.Conjunction) *flowv1.FlowSchema {
	return &flowv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: flowv1.FlowSchemaSpec{
		MatchingPriority: matchingPriority, RequestPriority: flowv1.RequestPriorityReference{Name: target},
		Match: conjunctions}}
}

// projection is the Projected condition of one of our objects and its status.nativeName.
type projection struct {
	status, reason, message, nativeName string
}

func (p projection) String() string {
	return fmt.Sprintf("Projected=%s/%s nativeName=%q (%s)", p.status, p.reason, p.nativeName, p.message)
}

// currentProjection reads the Projected condition, "" when absent or about an older generation.
func currentProjection(conds []metav1.Condition, generation int64, nativeName string) projection {
	c := meta.FindStatusCondition(conds, flowv1.ConditionProjected)
	if c == nil || c.ObservedGeneration != generation {
		return projection{}
	}
	return projection{status: string(c.Status), reason: c.Reason, message: c.Message, nativeName: nativeName}
}

func projectionOfRP(t testing.TB, name string) projection {
	t.Helper()
	obj := getObject(t, name, &flowv1.RequestPriority{})
	return currentProjection(obj.Status.Conditions, obj.Generation, obj.Status.NativeName)
}

func projectionOfFS(t testing.TB, name string) projection {
	t.Helper()
	obj := getObject(t, name, &flowv1.FlowSchema{})
	return currentProjection(obj.Status.Conditions, obj.Generation, obj.Status.NativeName)
}

// waitProjectedRP waits until the RequestPriority reports Projected=True with a native name,
// and returns the name.
func waitProjectedRP(t testing.TB, name string) string {
	t.Helper()
	return waitProjected(t, "RequestPriority", name, projectionOfRP)
}

func waitProjectedFS(t testing.TB, name string) string {
	t.Helper()
	return waitProjected(t, "FlowSchema", name, projectionOfFS)
}

// waitProjected waits until read says the object kind/name is Projected=True with a native
// name, and returns the name.
func waitProjected(t testing.TB, kind, name string, read func(testing.TB, string) projection) string {
	t.Helper()
	var p projection
	harness.Eventually(t, waitTimeout, kind+" "+name+" to be projected with a native name", func() error {
		if p = read(t, name); p.status != "True" || p.nativeName == "" {
			return fmt.Errorf("%s %s: %v", kind, name, p)
		}
		return nil
	})
	return p.nativeName
}

// waitFSReason waits until the FlowSchema reports Projected=False with the reason.
func waitFSReason(t testing.TB, name, reason string) projection {
	t.Helper()
	var p projection
	harness.Eventually(t, waitTimeout, "the check in waitFSReason", func() error {
		if p = projectionOfFS(t, name); p.status != "False" || p.reason != reason {
			return fmt.Errorf("FlowSchema %s: %v, want Projected=False/%s", name, p, reason)
		}
		return nil
	})
	return p
}

// waitRPReason waits until RequestPriority name reports Projected with reason.
func waitRPReason(t testing.TB, name, reason string) projection {
	t.Helper()
	var p projection
	harness.Eventually(t, waitTimeout, "the check in waitRPReason", func() error {
		if p = projectionOfRP(t, name); p.reason != reason {
			return fmt.Errorf("RequestPriority %s: %s, want reason %s", name, p, reason)
		}
		return nil
	})
	return p
}

// nativeFS and nativePLC read a native object as the admin.
func nativeFS(t testing.TB, name string) *flowcontrolv1.FlowSchema {
	t.Helper()
	return getObject(t, name, &flowcontrolv1.FlowSchema{})
}

func nativePLC(t testing.TB, name string) *flowcontrolv1.PriorityLevelConfiguration {
	t.Helper()
	return getObject(t, name, &flowcontrolv1.PriorityLevelConfiguration{})
}

// getObject reads the cluster-scoped object name into obj as the admin and returns obj.
func getObject[T client.Object](t testing.TB, name string, obj T) T {
	t.Helper()
	if err := k8s.Get(context.Background(), client.ObjectKey{Name: name}, obj); err != nil {
		t.Fatalf("getting %T %s: %v", obj, name, err)
	}
	return obj
}

// list lists every object of each list's kind as the admin.
func list(t testing.TB, lists ...client.ObjectList) {
	t.Helper()
	for _, l := range lists {
		if err := k8s.List(context.Background(), l); err != nil {
			t.Fatal(err)
		}
	}
}

// checkOwned checks the operator's marks on a native object projected from kind/name.
func checkOwned(t testing.TB, obj metav1.Object, kind, name string) {
	t.Helper()
	if got := obj.GetLabels()[flowv1.LabelManagedBy]; got != flowv1.ManagedByValue {
		t.Errorf("native %s: label %s=%q, want %q", obj.GetName(), flowv1.LabelManagedBy, got, flowv1.ManagedByValue)
	}
	if got, want := obj.GetAnnotations()[flowv1.AnnotationSource], kind+"/"+name; got != want {
		t.Errorf("native %s: annotation %s=%q, want %q", obj.GetName(), flowv1.AnnotationSource, got, want)
	}
}

// identity is who a request impersonates: a user and, when set, the groups (Impersonate-Group;
// kube-apiserver then adds system:authenticated unless system:authenticated or
// system:unauthenticated is among them; without groups, a service account user gets its
// service-account groups).
type identity struct {
	user   string
	groups []string
}

func (id identity) String() string {
	if len(id.groups) == 0 {
		return id.user
	}
	return id.user + "[" + strings.Join(id.groups, ",") + "]"
}

// apiRequest is one raw HTTP request to kube-apiserver.
type apiRequest struct {
	as     identity
	method string
	// path is the URL path and query, e.g. /api/v1/namespaces/default/configmaps?watch=true.
	path string
	// contentType and body, for writes.
	contentType string
	body        string
	// client sends the request; nil: admin.
	client *http.Client
	// readAll reads a successful response's whole body (the request holds its seat in
	// kube-apiserver until the body is written); otherwise only its first 4 KiB are read.
	readAll bool
}

func (r apiRequest) String() string { return fmt.Sprintf("%s %s as %v", r.method, r.path, r.as) }

// apiResponse is what kube-apiserver answered.
type apiResponse struct {
	status int
	// flowSchemaUID and priorityLevelUID are the classification headers.
	flowSchemaUID, priorityLevelUID string
	retryAfter                      string
	body                            string
}

// send sends the request once through the admin's transport with impersonation headers. The
// body of the response is read up to 4 KiB (enough for a Status) and the rest discarded.
func send(ctx context.Context, r apiRequest) (apiResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, baseURL+r.path, body)
	if err != nil {
		return apiResponse{}, err
	}
	if r.contentType != "" {
		req.Header.Set("Content-Type", r.contentType)
	}
	req.Header.Set("Accept", "application/json")
	if r.as.user != "" {
		req.Header.Set("Impersonate-User", r.as.user)
		for _, g := range r.as.groups {
			req.Header.Add("Impersonate-Group", g)
		}
	}
	c := admin
	if r.client != nil {
		c = r.client
	}
	resp, err := c.Do(req)
	if err != nil {
		return apiResponse{}, fmt.Errorf("%v: %w", r, err)
	}
	defer func() { _ = resp.Body.Close() }()
	var data []byte
	if r.readAll && resp.StatusCode == http.StatusOK {
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			return apiResponse{}, fmt.Errorf("%v: reading the response: %w", r, err)
		}
	} else {
		data, _ = io.ReadAll(io.LimitReader(resp.Body, 4096))
	}
	return apiResponse{
		status:           resp.StatusCode,
		flowSchemaUID:    resp.Header.Get(headerFlowSchemaUID),
		priorityLevelUID: resp.Header.Get(headerPriorityLevelUID),
		retryAfter:       resp.Header.Get("Retry-After"),
		body:             string(data),
	}, nil
}

// get is a GET as the identity.
func get(t testing.TB, as identity, path string) apiResponse {
	t.Helper()
	resp, err := send(context.Background(), apiRequest{as: as, method: http.MethodGet, path: path})
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// nativeIndex maps the UIDs of every native FlowSchema and PriorityLevelConfiguration in the
// cluster to the object.
type nativeIndex struct {
	fsByUID  map[string]*flowcontrolv1.FlowSchema
	plcByUID map[string]*flowcontrolv1.PriorityLevelConfiguration
}

func listNatives(t testing.TB) nativeIndex {
	t.Helper()
	var fss flowcontrolv1.FlowSchemaList
	var plcs flowcontrolv1.PriorityLevelConfigurationList
	list(t, &fss, &plcs)
	idx := nativeIndex{fsByUID: map[string]*flowcontrolv1.FlowSchema{},
		plcByUID: map[string]*flowcontrolv1.PriorityLevelConfiguration{}}
	for i := range fss.Items {
		idx.fsByUID[string(fss.Items[i].UID)] = &fss.Items[i]
	}
	for i := range plcs.Items {
		idx.plcByUID[string(plcs.Items[i].UID)] = &plcs.Items[i]
	}
	return idx
}

// nativeVersions maps every native FlowSchema and PriorityLevelConfiguration in the cluster
// (the operator's and kube-apiserver's) to its resourceVersion.
func nativeVersions(t testing.TB) map[string]string {
	return listVersions(t, map[string]client.ObjectList{"FlowSchema/": &flowcontrolv1.FlowSchemaList{},
		"PriorityLevelConfiguration/": &flowcontrolv1.PriorityLevelConfigurationList{}})
}

// ourVersions maps every RequestPriority and FlowSchema of ours to its resourceVersion.
func ourVersions(t testing.TB) map[string]string {
	return listVersions(t, map[string]client.ObjectList{"rp/": &flowv1.RequestPriorityList{}, "fs/": &flowv1.FlowSchemaList{}})
}

// listVersions lists each kind and maps prefix+name to resourceVersion.
func listVersions(t testing.TB, lists map[string]client.ObjectList) map[string]string {
	t.Helper()
	out := map[string]string{}
	for prefix, l := range lists {
		list(t, l)
		if err := meta.EachListItem(l, func(o runtime.Object) error {
			m := o.(metav1.Object)
			out[prefix+m.GetName()] = m.GetResourceVersion()
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// diffVersions describes how two version maps differ; "" when equal.
func diffVersions(before, after map[string]string) string {
	var out []string
	for k, v := range before {
		if w, ok := after[k]; !ok {
			out = append(out, k+" deleted")
		} else if w != v {
			out = append(out, fmt.Sprintf("%s written (resourceVersion %s -> %s)", k, v, w))
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			out = append(out, k+" created")
		}
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}

// waitSettled waits until the configuration has settled: every RequestPriority and
// FlowSchema of ours has a Projected condition of its current generation that is not Pending
// (the operator has written every native object its plan holds), kube-apiserver has digested
// every native FlowSchema (its Dangling condition reads Found), every projected
// RequestPriority shows its native level's current seats, and neither our objects nor
// the native ones change over half a second.
func waitSettled(t testing.TB) {
	t.Helper()
	harness.Eventually(t, waitTimeout, "the check in waitSettled", func() error {
		before, ours := nativeVersions(t), ourVersions(t)
		if err := settledOnce(); err != nil {
			return err
		}
		time.Sleep(500 * time.Millisecond)
		if err := settledOnce(); err != nil {
			return err
		}
		if d := diffVersions(before, nativeVersions(t)); d != "" {
			return fmt.Errorf("native objects still changing: %s", d)
		}
		if d := diffVersions(ours, ourVersions(t)); d != "" {
			return fmt.Errorf("our objects still changing: %s", d)
		}
		return nil
	})
}

func settledOnce() error {
	ctx := context.Background()
	var rps flowv1.RequestPriorityList
	var fss flowv1.FlowSchemaList
	if err := k8s.List(ctx, &rps); err != nil {
		return err
	}
	if err := k8s.List(ctx, &fss); err != nil {
		return err
	}
	for _, o := range rps.Items {
		if p := currentProjection(o.Status.Conditions, o.Generation, o.Status.NativeName); p.status == "" || p.reason == flowv1.ReasonPending {
			return fmt.Errorf("RequestPriority %s: %v", o.Name, p)
		}
	}
	for _, o := range fss.Items {
		if p := currentProjection(o.Status.Conditions, o.Generation, o.Status.NativeName); p.status == "" || p.reason == flowv1.ReasonPending {
			return fmt.Errorf("FlowSchema %s: %v", o.Name, p)
		}
	}
	var natives flowcontrolv1.FlowSchemaList
	if err := k8s.List(ctx, &natives); err != nil {
		return err
	}
	for _, n := range natives.Items {
		c := danglingCondition(&n)
		if c == nil || c.Status != flowcontrolv1.ConditionFalse {
			return fmt.Errorf("native FlowSchema %s: kube-apiserver has not digested it yet (Dangling %+v)", n.Name, c)
		}
	}
	return seatsSettled(rps.Items)
}

func danglingCondition(fs *flowcontrolv1.FlowSchema) *flowcontrolv1.FlowSchemaCondition {
	for i := range fs.Status.Conditions {
		if fs.Status.Conditions[i].Type == flowcontrolv1.FlowSchemaConditionDangling {
			return &fs.Status.Conditions[i]
		}
	}
	return nil
}

// eventsSince counts the events emitted (or repeated as a series) at or after start, in every
// namespace.
func eventsSince(t testing.TB, start time.Time) int {
	t.Helper()
	var events eventsv1.EventList
	list(t, &events)
	n := 0
	for _, e := range events.Items {
		if !e.EventTime.Time.Before(start) || (e.Series != nil && !e.Series.LastObservedTime.Time.Before(start)) {
			n++
		}
	}
	return n
}

// scrapeMetric sums the samples of a metric in kube-apiserver's /metrics whose labels include
// every label="value" pair given; found is false when no sample matched.
func scrapeMetric(t testing.TB, name string, labels ...string) (sum float64, found bool) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, baseURL+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := admin.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: HTTP %d", resp.StatusCode)
	}
	var want []string
	for i := 0; i+1 < len(labels); i += 2 {
		want = append(want, labels[i]+`="`+labels[i+1]+`"`)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		end := strings.LastIndexByte(line, ' ')
		labelPart := line[:end]
		ok := true
		for _, w := range want {
			if !strings.Contains(labelPart, "{"+w+",") && !strings.Contains(labelPart, ","+w+",") &&
				!strings.Contains(labelPart, ","+w+"}") && !strings.Contains(labelPart, "{"+w+"}") {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(line[end+1:], 64)
		if err != nil {
			t.Fatalf("metric line %q: %v", line, err)
		}
		sum += v
		found = true
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return sum, found
}
