package sidebyside

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	genericfilters "k8s.io/apiserver/pkg/server/filters"
	utilflowcontrol "k8s.io/apiserver/pkg/util/flowcontrol"
	fcmetrics "k8s.io/apiserver/pkg/util/flowcontrol/metrics"
	fcrequest "k8s.io/apiserver/pkg/util/flowcontrol/request"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/internal/nativeview"
)

const (
	// upstreamConcurrency is upstream's server concurrency limit: kube-apiserver's default
	// --max-requests-inflight plus --max-mutating-requests-inflight.
	upstreamConcurrency = 600
	// upstreamWaitLimit is how long a request may wait in an upstream queue (none does here).
	upstreamWaitLimit = 15 * time.Second
	// upstreamSyncTimeout bounds the wait for upstream's controller to digest its objects.
	upstreamSyncTimeout = 30 * time.Second
)

// upstream is kube-apiserver's priority-and-fairness filter fed through an informer on a fake
// clientset, as an API server builds it, and the objects it holds, by UID.
type upstream struct {
	handler http.Handler
	schemas map[types.UID]*flowcontrolv1.FlowSchema
	levels  map[types.UID]*flowcontrolv1.PriorityLevelConfiguration
}

// startUpstream builds upstream's filter over next with kube-apiserver's mandatory and
// suggested objects plus the plan's, starts its configuration controller (stopped at the end
// of the test) and returns once the controller has digested the objects.
func startUpstream(t *testing.T, plan *native.Plan, next http.Handler, probe *http.Request) *upstream {
	t.Helper()
	fcmetrics.Register() // what an API server's /metrics route does; the filter's gauges need it
	u := &upstream{schemas: map[types.UID]*flowcontrolv1.FlowSchema{},
		levels: map[types.UID]*flowcontrolv1.PriorityLevelConfiguration{}}
	client := fake.NewClientset(u.objects(plan)...)
	factory := informers.NewSharedInformerFactory(client, 0)
	ctl := utilflowcontrol.New(factory, client.FlowcontrolV1(), upstreamConcurrency)
	u.handler = genericfilters.WithPriorityAndFairness(next, longRunning, ctl, oneSeat, upstreamWaitLimit)

	stop, done := make(chan struct{}), make(chan struct{})
	factory.Start(stop)
	go func() {
		defer close(done)
		_ = ctl.Run(stop)
	}()
	t.Cleanup(func() {
		close(stop)
		<-done
		factory.Shutdown()
	})
	u.waitDigested(t, probe)
	return u
}

// longRunning is kube-apiserver's LongRunningRequestCheck; both filters get it.
var longRunning = genericfilters.BasicLongRunningRequestCheck(
	sets.NewString("watch", "proxy"), sets.NewString("attach", "exec", "proxy", "log", "portforward"))

// oneSeat is the work estimator: every request takes one seat (classification does not
// depend on it, and nothing waits).
func oneSeat(*http.Request, string, string) fcrequest.WorkEstimate {
	return fcrequest.WorkEstimate{InitialSeats: 1}
}

// objects returns the native objects kube-apiserver would hold, each with a UID (the fake
// clientset assigns none and upstream's headers carry only UIDs) and, for FlowSchemas, the
// Dangling=False condition upstream writes, so that its controller has no status to apply.
func (u *upstream) objects(plan *native.Plan) []runtime.Object {
	var objs []runtime.Object
	boot := nativeview.BootstrapObjects()
	for _, pl := range append(boot.PriorityLevels, plan.PriorityLevels...) {
		pl := pl.DeepCopy()
		pl.UID = types.UID("plc-" + pl.Name)
		u.levels[pl.UID] = pl
		objs = append(objs, pl)
	}
	for _, fs := range append(boot.FlowSchemas, plan.FlowSchemas...) {
		fs := fs.DeepCopy()
		fs.UID = types.UID("fs-" + fs.Name)
		fs.Status.Conditions = []flowcontrolv1.FlowSchemaCondition{{Type: flowcontrolv1.FlowSchemaConditionDangling,
			Status: flowcontrolv1.ConditionFalse, Reason: "Found", Message: fmt.Sprintf(
				"This FlowSchema references the PriorityLevelConfiguration object named %q and it exists",
				fs.Spec.PriorityLevelConfiguration.Name)}}
		u.schemas[fs.UID] = fs
		objs = append(objs, fs)
	}
	return objs
}

// waitDigested serves probe, a request the projection's backstop classifies, until upstream
// classifies it there: before its first digest, upstream knows only its mandatory objects. The
// digest reads every object at once, so one projected object in effect means all are.
func (u *upstream) waitDigested(t *testing.T, probe *http.Request) {
	t.Helper()
	want := native.Source(native.KindFlowSchema, "non-top-backstop")
	deadline := time.Now().Add(upstreamSyncTimeout)
	for {
		rec := httptest.NewRecorder()
		u.handler.ServeHTTP(rec, probe)
		fs := u.schemas[types.UID(rec.Header().Get(flowcontrolv1.ResponseHeaderMatchedFlowSchemaUID))]
		if fs != nil && fs.Annotations[flowv1.AnnotationSource] == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("upstream did not digest its configuration within %s: the probe %s %s went to %v, want the "+
				"native FlowSchema whose source is %s", upstreamSyncTimeout, probe.Method, probe.URL, nameOf(fs), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// classification maps upstream's response headers back to our names: a projected object to
// the object it was projected from (its source annotation), kube-apiserver's mandatory exempt
// FlowSchema to our implicit system:masters schema, its exempt level to "exempt"; any other
// native object of kube-apiserver is named "kube-apiserver:<name>", which never equals ours.
func (u *upstream) classification(h http.Header, mastersSchema string) (schema, level string) {
	fs := u.schemas[types.UID(h.Get(flowcontrolv1.ResponseHeaderMatchedFlowSchemaUID))]
	pl := u.levels[types.UID(h.Get(flowcontrolv1.ResponseHeaderMatchedPriorityLevelConfigurationUID))]
	schema, level = "(no header)", "(no header)"
	if fs != nil {
		schema = sourceName(fs.Annotations, native.KindFlowSchema, fs.Name)
		if fs.Name == flowcontrolv1.FlowSchemaNameExempt {
			schema = mastersSchema
		}
	}
	if pl != nil {
		level = sourceName(pl.Annotations, native.KindRequestPriority, pl.Name)
		if pl.Name == flowcontrolv1.PriorityLevelConfigurationNameExempt {
			level = exemptLevel
		}
	}
	return schema, level
}

// exemptLevel names the exempt level in both filters' results.
const exemptLevel = "exempt"

// sourceName is the name of the object a native object was projected from.
func sourceName(annotations map[string]string, kind, nativeName string) string {
	if name, ok := strings.CutPrefix(annotations[flowv1.AnnotationSource], kind+"/"); ok {
		return name
	}
	return "kube-apiserver:" + nativeName
}

func nameOf(fs *flowcontrolv1.FlowSchema) string {
	if fs == nil {
		return "(no FlowSchema header)"
	}
	return fs.Name
}
