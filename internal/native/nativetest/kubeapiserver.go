// Package nativetest runs kube-apiserver's own API Priority and Fairness controller
// (k8s.io/apiserver pkg/util/flowcontrol, as an API server builds it) in-process on a given set
// of native objects: the oracle of the tests that ask which native FlowSchema kube-apiserver
// picks for a request. The project has one classifier of native objects (nativeview, over
// internal/native's matcher); tests compare it, and the projection, with this oracle, never
// with a second hand-written classifier.
package nativetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"
	endpointsrequest "k8s.io/apiserver/pkg/endpoints/request"
	utilflowcontrol "k8s.io/apiserver/pkg/util/flowcontrol"
	fcrequest "k8s.io/apiserver/pkg/util/flowcontrol/request"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2"

	"github.com/apf-operator/apf-operator/internal/apf/request"
	"github.com/apf-operator/apf-operator/internal/nativeview/bootstrapset"
)

// sentinelUser is classified by the sentinel FlowSchema once the controller has digested its
// configuration.
const sentinelUser, sentinelSchema = "oracle-sentinel", "oracle-sentinel"

// quietKlog silences klog once per process: the controller logs what it cannot decode and its
// configuration changes. Setting it again at every Start raced with the reads of an earlier
// controller's goroutines (klog's logger is a global).
var quietKlog sync.Once

// KubeAPIServer is kube-apiserver's APF controller on a fixed set of native objects.
type KubeAPIServer struct {
	ctl     utilflowcontrol.Interface
	stop    chan struct{}
	done    chan struct{}
	factory informers.SharedInformerFactory
}

// Start starts the controller on the given objects (with the API's defaults applied, as a
// cluster stores them), kube-apiserver's mandatory ones where absent, and a sentinel FlowSchema (precedence 2, its own user only), and returns once it
// classifies by them. Close stops it.
func Start(t testing.TB, levels []flowcontrolv1.PriorityLevelConfiguration, schemas []flowcontrolv1.FlowSchema) *KubeAPIServer {
	t.Helper()
	quietKlog.Do(func() { klog.SetLogger(logr.Discard()) })
	client := fake.NewClientset(objects(levels, schemas)...)
	factory := informers.NewSharedInformerFactory(client, 0)
	k := &KubeAPIServer{ctl: utilflowcontrol.New(factory, client.FlowcontrolV1(), 10000), stop: make(chan struct{}),
		done: make(chan struct{}), factory: factory}
	factory.Start(k.stop)
	go func() {
		defer close(k.done)
		_ = k.ctl.Run(k.stop)
	}()
	probe := &endpointsrequest.RequestInfo{Path: "/probe", Verb: "get"}
	for deadline := time.Now().Add(2 * time.Minute); k.PickRequest(probe, sentinelUser, nil) != sentinelSchema; {
		if time.Now().After(deadline) {
			k.Close()
			t.Fatal("kube-apiserver's APF controller did not take its configuration within 2 minutes")
		}
		time.Sleep(5 * time.Millisecond)
	}
	return k
}

// objects are levels and schemas, the mandatory objects none of them replaces, and the
// sentinel, each FlowSchema with the condition the controller would write (so it writes none).
func objects(levels []flowcontrolv1.PriorityLevelConfiguration, schemas []flowcontrolv1.FlowSchema) []runtime.Object {
	var pls, fss []runtime.Object
	has := map[string]bool{}
	for i := range levels {
		pls, has["l/"+levels[i].Name] = append(pls, defaultLevel(levels[i].DeepCopy())), true
	}
	for i := range schemas {
		fss, has["s/"+schemas[i].Name] = append(fss, defaultSchema(schemas[i].DeepCopy())), true
	}
	for _, l := range bootstrapset.MandatoryPriorityLevels() {
		if !has["l/"+l.Name] {
			pls, has["l/"+l.Name] = append(pls, &l), true
		}
	}
	for _, fs := range bootstrapset.MandatoryFlowSchemas() {
		if !has["s/"+fs.Name] {
			fss = append(fss, &fs)
		}
	}
	fss = append(fss, &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: sentinelSchema},
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: flowcontrolv1.PriorityLevelConfigurationNameExempt},
			MatchingPrecedence:         2,
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects:         []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: sentinelUser}}},
				NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}},
			}},
		}})
	for _, fs := range fss {
		digested(fs.(*flowcontrolv1.FlowSchema), has)
	}
	return append(pls, fss...)
}

// digested sets the Dangling condition the controller would write (k8s.io/apiserver's
// presyncFlowSchemaStatus: status, reason and message), so that it writes no status: each
// write went through the fake clientset's server-side apply and made the controller digest
// its configuration again. has holds "l/" and the names of the levels there are.
func digested(fs *flowcontrolv1.FlowSchema, has map[string]bool) {
	level := fs.Spec.PriorityLevelConfiguration.Name
	cond := flowcontrolv1.FlowSchemaCondition{Type: flowcontrolv1.FlowSchemaConditionDangling, Status: flowcontrolv1.ConditionFalse,
		Reason:  "Found",
		Message: fmt.Sprintf("This FlowSchema references the PriorityLevelConfiguration object named %q and it exists", level)}
	if !has["l/"+level] {
		cond.Status, cond.Reason = flowcontrolv1.ConditionTrue, "NotFound"
		cond.Message = fmt.Sprintf("This FlowSchema references the PriorityLevelConfiguration object named %q but there is no such object", level)
	}
	fs.Status.Conditions = []flowcontrolv1.FlowSchemaCondition{cond}
}

// Close stops the controller.
func (k *KubeAPIServer) Close() {
	close(k.stop)
	<-k.done
	k.factory.Shutdown()
}

// PickRequest classifies one request, as kube-apiserver's RequestInfoFactory read it, and
// returns the name of the FlowSchema kube-apiserver picked (catch-all when none matches).
//
// The controller's Handle picks the FlowSchema and its level, calls the note with them, and
// only then queues, dispatches and observes the request. The tests ask only for the pick, so
// the note ends Handle there (a panic of our own, recovered here; the controller releases its
// lock on the way out and has not touched its queues yet): the pick is the controller's own,
// without the queuing and metrics that were most of a pick's CPU.
func (k *KubeAPIServer) PickRequest(info *endpointsrequest.RequestInfo, name string, groups []string) (picked string) {
	note := func(fs *flowcontrolv1.FlowSchema, _ *flowcontrolv1.PriorityLevelConfiguration, _ string) {
		panic(noted{fs.Name})
	}
	defer func() {
		r := recover()
		n, ok := r.(noted)
		if !ok {
			panic(r)
		}
		picked = n.schema
	}()
	digest := utilflowcontrol.RequestDigest{RequestInfo: info, User: &user.DefaultInfo{Name: name, Groups: groups}}
	k.ctl.Handle(context.Background(), digest, note, func() fcrequest.WorkEstimate { return fcrequest.WorkEstimate{InitialSeats: 1} },
		func(bool) {}, func() {})
	panic("kube-apiserver's APF controller handled a request without noting its FlowSchema")
}

// noted ends Handle at its note, carrying the FlowSchema picked.
type noted struct{ schema string }

// Pick is PickRequest for a request's attributes (whose Groups are final: nothing is added).
func (k *KubeAPIServer) Pick(a *request.Attributes) string {
	info := &endpointsrequest.RequestInfo{Verb: a.Verb, Path: a.Path}
	if a.ResourceRequest {
		info = &endpointsrequest.RequestInfo{IsResourceRequest: true, Verb: a.Verb, APIGroup: a.APIGroup,
			Resource: a.Resource, Subresource: a.Subresource, Namespace: a.Namespace, Name: a.Name}
	}
	return k.PickRequest(info, a.User, a.Groups)
}
