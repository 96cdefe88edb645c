package failover

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/defaults"
	"github.com/apf-operator/apf-operator/test/harness"
)

// defaultKeys are the default objects of enforcement native (the replicas' setting, as the
// chart's) as "rp/<name>" and "fs/<name>".
func defaultKeys() []string { return keysOf(defaults.Native()) }

// keysOf are a set's default objects as "rp/<name>" and "fs/<name>".
func keysOf(set defaults.Set) []string {
	var keys []string
	for _, rp := range set.RequestPriorities() {
		keys = append(keys, "rp/"+rp.Name)
	}
	for _, fs := range set.FlowSchemas() {
		keys = append(keys, "fs/"+fs.Name)
	}
	sort.Strings(keys)
	return keys
}

// identity is what shows whether an object was re-created or its spec rewritten.
type identity struct {
	uid        types.UID
	generation int64
}

// identities lists every RequestPriority and FlowSchema, keyed "rp/<name>" and "fs/<name>".
func identities(t *testing.T) map[string]identity {
	t.Helper()
	out, err := harness.MapObjects(context.Background(), k8s, func(o harness.Object) identity {
		return identity{o.GetUID(), o.GetGeneration()}
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// waitReady waits until every object named in keys exists and reports Ready=True.
func waitReady(t *testing.T, keys []string) {
	t.Helper()
	harness.Eventually(t, 90*time.Second, fmt.Sprintf("%v to be Ready", keys), func(ctx context.Context) (bool, error) {
		ready, err := harness.ReadyObjects(ctx, k8s)
		if err != nil {
			return false, err
		}
		for _, k := range keys {
			if !ready[k] {
				return false, fmt.Errorf("%s is not Ready (present: %t)", k, hasKey(ready, k))
			}
		}
		return true, nil
	})
}

func hasKey(m map[string]bool, k string) bool { _, ok := m[k]; return ok }

// waitReason waits until obj's Ready condition has the given status and reason.
func waitReason(t *testing.T, obj client.Object, status metav1.ConditionStatus, reason string) {
	t.Helper()
	harness.Eventually(t, 90*time.Second, fmt.Sprintf("%s Ready=%s/%s", obj.GetName(), status, reason), func(ctx context.Context) (bool, error) {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(harness.Conditions(obj), flowv1.ConditionReady)
		if c == nil {
			return false, fmt.Errorf("no Ready condition yet")
		}
		if c.Status != status || c.Reason != reason {
			return false, fmt.Errorf("Ready=%s/%s: %s", c.Status, c.Reason, c.Message)
		}
		return true, nil
	})
}

// queuedLevel returns a valid RequestPriority at the given level.
func queuedLevel(name string, level int32) *flowv1.RequestPriority {
	return &flowv1.RequestPriority{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: flowv1.RequestPrioritySpec{
		PriorityLevel: level, AssuredConcurrencyShares: ptr.To[int32](1), QueuesPerWidth: ptr.To[int32](1),
		QueueLengthLimit: ptr.To[int32](5)}}
}

// tooBigAHand is a RequestPriority that only the webhook rejects: ff(64, 12) >= 2^60 is not a
// CEL rule of the CRD.
func tooBigAHand(name string, level int32) *flowv1.RequestPriority {
	rp := queuedLevel(name, level)
	rp.Spec.QueuesPerWidth, rp.Spec.HandSize = ptr.To[int32](64), ptr.To[int32](12)
	return rp
}

// webhookDenial is in the message of the webhook's rejection of tooBigAHand.
const webhookDenial = "ff(queuesPerWidth=64, handSize=12)"

// admission creates a good and a bad object through the webhook and reports what happened: an
// error if the bad one was admitted or the good one denied for a reason other than an
// unreachable webhook; unreachable is true when the API server could not call the webhook.
func admission(ctx context.Context, good, bad client.Object) (unreachable bool, err error) {
	if err := k8s.Create(ctx, bad); err == nil {
		return false, fmt.Errorf("the invalid %s was admitted", bad.GetName())
	} else if isUnreachable(err) {
		return true, nil
	} else if !strings.Contains(err.Error(), webhookDenial) {
		return false, fmt.Errorf("the invalid %s was denied for another reason: %w", bad.GetName(), err)
	}
	if err := k8s.Create(ctx, good); isUnreachable(err) {
		return true, nil
	} else if err != nil {
		return false, fmt.Errorf("the valid %s was denied: %w", good.GetName(), err)
	}
	return false, nil
}

// isUnreachable reports whether err says kube-apiserver failed to call the webhook.
func isUnreachable(err error) bool {
	return err != nil && strings.Contains(err.Error(), "failed calling webhook")
}
