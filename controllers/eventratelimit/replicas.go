package eventratelimit

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/apf-operator/apf-operator/internal/eventratelimit"
)

// replicaPollPeriod is how often the ready replicas are read.
const replicaPollPeriod = 10 * time.Second

// replicaDivider keeps the engine's divisor at the ready replicas of the operator's
// Deployment. It runs in every replica. The Deployment is read directly (one GET per period)
// rather than watched, so the cache holds no Deployments.
type replicaDivider struct {
	reader     client.Reader
	deployment types.NamespacedName
	engine     *eventratelimit.Engine
	period     time.Duration
}

// Start polls until ctx ends.
func (d *replicaDivider) Start(ctx context.Context) error {
	t := time.NewTicker(d.period)
	defer t.Stop()
	for {
		d.poll(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// poll reads the ready replicas; on an error the last divisor stays.
func (d *replicaDivider) poll(ctx context.Context) {
	var dep appsv1.Deployment
	if err := d.reader.Get(ctx, d.deployment, &dep); err != nil {
		logf.FromContext(ctx).Error(err, "Reading the ready replicas for EventRateLimit; keeping the last divisor",
			"deployment", d.deployment, "divisor", d.engine.Replicas())
		return
	}
	n := max(1, int(dep.Status.ReadyReplicas))
	if n != d.engine.Replicas() {
		logf.FromContext(ctx).Info("EventRateLimit limits divided by the ready replicas", "replicas", n)
		d.engine.SetReplicas(n)
	}
}

// NeedLeaderElection is false: every replica enforces its share.
func (d *replicaDivider) NeedLeaderElection() bool { return false }
