package benchmark

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sync"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"
	endpointsrequest "k8s.io/apiserver/pkg/endpoints/request"
	utilflowcontrol "k8s.io/apiserver/pkg/util/flowcontrol"
	fcmetrics "k8s.io/apiserver/pkg/util/flowcontrol/metrics"
	fcrequest "k8s.io/apiserver/pkg/util/flowcontrol/request"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/apf-operator/apf-operator/internal/nativeview/bootstrapset"
)

// upstreamSyncTimeout bounds the wait for upstream to digest its configuration.
const upstreamSyncTimeout = 60 * time.Second

// Upstream is Kubernetes' API Priority and Fairness filter, configured with flowcontrol/v1
// objects through a fake clientset and a shared informer factory, exactly as an API server
// builds it (utilflowcontrol.New), with its Prometheus metrics registered.
type Upstream struct {
	ctl     utilflowcontrol.Interface
	stop    chan struct{}
	done    chan struct{}
	factory informers.SharedInformerFactory
}

var silenceKlogOnce sync.Once

// silenceKlog discards klog output, as the notes' measurement did. Disabled klog.V calls still
// cost what they cost.
func silenceKlog() {
	silenceKlogOnce.Do(func() {
		fs := flag.NewFlagSet("klog", flag.ContinueOnError)
		klog.InitFlags(fs)
		for name, value := range map[string]string{
			"logtostderr": "false", "alsologtostderr": "false", "stderrthreshold": "FATAL", "v": "0",
		} {
			if err := fs.Set(name, value); err != nil {
				panic(err)
			}
		}
		klog.SetOutput(io.Discard)
	})
}

// NewUpstream starts upstream's configuration controller on cfg and returns once the
// controller has applied cfg (every probe request is classified as cfg says).
func NewUpstream(cfg Config) (*Upstream, error) {
	silenceKlog()
	fcmetrics.Register() // what the API server's /metrics route does

	client := fake.NewClientset(upstreamObjects(cfg)...)
	factory := informers.NewSharedInformerFactory(client, 0)
	u := &Upstream{
		ctl:     utilflowcontrol.New(factory, client.FlowcontrolV1(), cfg.ServerConcurrencyLimit),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
		factory: factory,
	}
	factory.Start(u.stop)
	go func() {
		defer close(u.done)
		_ = u.ctl.Run(u.stop)
	}()
	if err := u.waitApplied(cfg); err != nil {
		u.Close()
		return nil, err
	}
	return u, nil
}

// Close implements Impl.
func (u *Upstream) Close() {
	close(u.stop)
	<-u.done
	u.factory.Shutdown()
}

// waitApplied polls until a request of the last per-user schema's user and one of a user no
// per-user schema matches are classified into the expected FlowSchemas.
func (u *Upstream) waitApplied(cfg Config) error {
	probes := map[string]string{} // user -> expected FlowSchema
	var lastUser *Schema
	for i, s := range cfg.Schemas {
		switch {
		case s.User != "":
			lastUser = &cfg.Schemas[i]
		case s.Group != "":
			probes["no-such-tenant"] = s.Name
		}
	}
	if lastUser != nil {
		probes[lastUser.User] = lastUser.Name
	}
	deadline := time.Now().Add(upstreamSyncTimeout)
	for user, want := range probes {
		p := u.Prepare(Request{User: user, Groups: []string{AuthenticatedGroup}, Verb: "get", Resource: "pods"}).(*upstreamRequest)
		for got := p.classify(); got != want; got = p.classify() {
			if time.Now().After(deadline) {
				return fmt.Errorf("upstream did not apply its configuration within %s: user %q went to FlowSchema %q, want %q",
					upstreamSyncTimeout, user, got, want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	return nil
}

// Prepare implements Impl: the request digest an API server's request-info and
// authentication filters would have produced, and the work estimate of its width.
func (u *Upstream) Prepare(r Request) Prepared {
	estimate := estimateWidth1
	if Width(r.Verb) == 2 {
		estimate = estimateWidth2
	}
	return &upstreamRequest{
		ctl: u.ctl,
		digest: utilflowcontrol.RequestDigest{
			RequestInfo: &endpointsrequest.RequestInfo{
				IsResourceRequest: true,
				Path:              fmt.Sprintf("/api/v1/namespaces/%s/%s", r.Namespace, r.Resource),
				Verb:              r.Verb,
				APIPrefix:         "api",
				APIVersion:        "v1",
				Namespace:         r.Namespace,
				Resource:          r.Resource,
				Parts:             []string{r.Resource},
			},
			User: &user.DefaultInfo{Name: r.User, Groups: r.Groups},
		},
		estimate: estimate,
	}
}

func estimateWidth1() fcrequest.WorkEstimate { return fcrequest.WorkEstimate{InitialSeats: 1} }
func estimateWidth2() fcrequest.WorkEstimate { return fcrequest.WorkEstimate{InitialSeats: 2} }

func ignoreNote(*flowcontrolv1.FlowSchema, *flowcontrolv1.PriorityLevelConfiguration, string) {}
func ignoreQueueNote(bool)                                                                    {}

type upstreamRequest struct {
	ctl      utilflowcontrol.Interface
	digest   utilflowcontrol.RequestDigest
	estimate func() fcrequest.WorkEstimate
}

// Handle implements Prepared.
func (r *upstreamRequest) Handle(ctx context.Context, exec func()) {
	r.ctl.Handle(ctx, r.digest, ignoreNote, r.estimate, ignoreQueueNote, exec)
}

// classify handles the request once and returns the name of the FlowSchema it matched.
func (r *upstreamRequest) classify() string {
	var name string
	note := func(fs *flowcontrolv1.FlowSchema, _ *flowcontrolv1.PriorityLevelConfiguration, _ string) {
		name = fs.Name
	}
	r.ctl.Handle(context.Background(), r.digest, note, r.estimate, ignoreQueueNote, func() {})
	return name
}

// upstreamObjects returns the mandatory objects and cfg's levels and schemas as flowcontrol/v1
// objects. Schemas carry the status condition upstream would write (Dangling=False), so the
// controller has no status to apply and does not reconfigure itself while timed.
func upstreamObjects(cfg Config) []runtime.Object {
	var objs []runtime.Object
	for _, l := range bootstrapset.MandatoryPriorityLevels() {
		objs = append(objs, &l)
	}
	for _, fs := range bootstrapset.MandatoryFlowSchemas() {
		objs = append(objs, withFoundCondition(&fs))
	}
	for _, l := range cfg.Levels {
		objs = append(objs, upstreamLevel(l))
	}
	for _, s := range cfg.Schemas {
		objs = append(objs, withFoundCondition(upstreamSchema(s)))
	}
	return objs
}

func upstreamLevel(l Level) *flowcontrolv1.PriorityLevelConfiguration {
	hand := l.HandSize
	if l.Queues == 1 {
		hand = 1 // upstream requires 1 <= handSize <= queues
	}
	return &flowcontrolv1.PriorityLevelConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: l.Name},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
			Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
				NominalConcurrencyShares: ptr.To(l.Shares),
				LendablePercent:          ptr.To(l.LendablePercent),
				BorrowingLimitPercent:    l.BorrowingLimitPercent,
				LimitResponse: flowcontrolv1.LimitResponse{
					Type: flowcontrolv1.LimitResponseTypeQueue,
					Queuing: &flowcontrolv1.QueuingConfiguration{
						Queues:           l.Queues,
						HandSize:         hand,
						QueueLengthLimit: l.QueueLengthLimit,
					},
				},
			},
		},
	}
}

func upstreamSchema(s Schema) *flowcontrolv1.FlowSchema {
	subject := flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: s.User}}
	if s.Group != "" {
		subject = flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindGroup, Group: &flowcontrolv1.GroupSubject{Name: s.Group}}
	}
	fs := &flowcontrolv1.FlowSchema{
		ObjectMeta: metav1.ObjectMeta{Name: s.Name},
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: s.Level},
			MatchingPrecedence:         s.Precedence,
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects: []flowcontrolv1.Subject{subject},
				ResourceRules: []flowcontrolv1.ResourcePolicyRule{{
					Verbs:        []string{flowcontrolv1.VerbAll},
					APIGroups:    []string{flowcontrolv1.APIGroupAll},
					Resources:    []string{flowcontrolv1.ResourceAll},
					Namespaces:   []string{flowcontrolv1.NamespaceEvery},
					ClusterScope: true,
				}},
			}},
		},
	}
	if s.ByUser {
		fs.Spec.DistinguisherMethod = &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType}
	}
	return fs
}

// withFoundCondition sets the Dangling=False condition upstream's controller would write.
func withFoundCondition(fs *flowcontrolv1.FlowSchema) *flowcontrolv1.FlowSchema {
	fs.Status.Conditions = []flowcontrolv1.FlowSchemaCondition{{
		Type:   flowcontrolv1.FlowSchemaConditionDangling,
		Status: flowcontrolv1.ConditionFalse,
		Reason: "Found",
		Message: fmt.Sprintf("This FlowSchema references the PriorityLevelConfiguration object named %q and it exists",
			fs.Spec.PriorityLevelConfiguration.Name),
	}}
	return fs
}
