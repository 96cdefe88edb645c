package benchmark

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf"
	"github.com/apf-operator/apf-operator/internal/apf/dispatch"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apf/metrics"
	"github.com/apf-operator/apf-operator/internal/apf/request"
)

// Ours is this project's engine (internal/apf), configured with the RequestPriority and
// FlowSchema objects equivalent to a Config, with its Prometheus metrics registered (in a
// registry of its own), as upstream's are.
type Ours struct {
	engine *apf.Engine
}

// NewOurs builds the engine for cfg. It fails if the effective configuration ignores any of
// cfg's objects, so that a mistake in the translation cannot go unnoticed.
func NewOurs(cfg Config) (*Ours, error) {
	rps, fss := oursObjects(cfg)
	eff := effective.Compute(rps, fss)
	if err := checkInEffect(eff); err != nil {
		return nil, err
	}
	return &Ours{engine: apf.NewEngine(eff, dispatch.Options{
		ServerConcurrencyLimit: cfg.ServerConcurrencyLimit,
		Metrics:                metrics.NewMetrics(prometheus.NewRegistry()),
	})}, nil
}

func newOursImpl(cfg Config) (Impl, error) { return NewOurs(cfg) }

// Prepare implements Impl: the attributes the engine's resolver would have produced.
func (o *Ours) Prepare(r Request) Prepared {
	return &oursRequest{engine: o.engine, attrs: request.Attributes{
		User:            r.User,
		Groups:          r.Groups,
		Verb:            r.Verb,
		Resource:        r.Resource,
		Namespace:       r.Namespace,
		ResourceRequest: true,
	}}
}

// Close implements Impl; the engine has no background work.
func (o *Ours) Close() {}

type oursRequest struct {
	engine *apf.Engine
	attrs  request.Attributes
}

// Handle implements Prepared.
func (r *oursRequest) Handle(ctx context.Context, exec func()) {
	r.engine.Handle(ctx, &r.attrs, exec)
}

// oursObjects translates cfg into RequestPriority and FlowSchema objects.
func oursObjects(cfg Config) ([]flowv1.RequestPriority, []flowv1.FlowSchema) {
	rps := make([]flowv1.RequestPriority, 0, len(cfg.Levels))
	for _, l := range cfg.Levels {
		rp := flowv1.RequestPriority{
			ObjectMeta: metav1.ObjectMeta{Name: l.Name},
			Spec: flowv1.RequestPrioritySpec{
				PriorityLevel:            l.Priority,
				AssuredConcurrencyShares: ptr.To(l.Shares),
				QueuesPerWidth:           ptr.To(l.Queues),
				QueueLengthLimit:         ptr.To(l.QueueLengthLimit),
				LendablePercent:          ptr.To(l.LendablePercent),
				BorrowingLimitPercent:    l.BorrowingLimitPercent,
			},
		}
		if l.Queues > 1 {
			rp.Spec.HandSize = ptr.To(l.HandSize)
		}
		rps = append(rps, rp)
	}
	fss := make([]flowv1.FlowSchema, 0, len(cfg.Schemas))
	for _, s := range cfg.Schemas {
		test := flowv1.AtomicTest{Equals: &flowv1.ValueTest{Field: flowv1.FieldUser, Value: s.User}}
		if s.Group != "" {
			test = flowv1.AtomicTest{SuperSet: &flowv1.SetTest{Field: flowv1.FieldGroups, Set: []string{s.Group}}}
		}
		fs := flowv1.FlowSchema{
			ObjectMeta: metav1.ObjectMeta{Name: s.Name},
			Spec: flowv1.FlowSchemaSpec{
				MatchingPriority: s.Precedence,
				RequestPriority:  flowv1.RequestPriorityReference{Name: s.Level},
				Match:            []flowv1.Conjunction{{And: []flowv1.AtomicTest{test}}},
			},
		}
		if s.ByUser {
			fs.Spec.FlowDistinguisher = &flowv1.FlowDistinguisher{Source: flowv1.SourceUser}
		}
		fss = append(fss, fs)
	}
	return rps, fss
}

// checkInEffect fails when the effective configuration ignores an object.
func checkInEffect(eff *effective.Config) error {
	var ignored []string
	for name, st := range eff.RequestPriorityStatus {
		if !st.InEffect {
			ignored = append(ignored, fmt.Sprintf("RequestPriority %s: %s: %s", name, st.Reason, st.Message))
		}
	}
	for name, st := range eff.FlowSchemaStatus {
		if !st.InEffect {
			ignored = append(ignored, fmt.Sprintf("FlowSchema %s: %s: %s", name, st.Reason, st.Message))
		}
	}
	if len(ignored) > 0 {
		sort.Strings(ignored)
		return fmt.Errorf("the effective configuration ignores %d object(s): %s", len(ignored), strings.Join(ignored, "; "))
	}
	return nil
}
