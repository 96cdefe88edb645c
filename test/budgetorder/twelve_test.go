package budgetorder_test

import (
	"context"
	"fmt"
	"maps"
	"net"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/test/harness"
)

const (
	creators   = 12
	shares     = 2
	fit        = 6 // 12 shares of budget at 60 seats
	watchFor   = 5 * time.Minute
	sampleStep = 5 * time.Second
	waitFor    = 2 * time.Minute
	gaugeSeats = "apiserver_flowcontrol_nominal_limit_seats"
)

// keptLevels are kube-apiserver's levels with seats.
var keptLevels = []string{"system", "node-high", "leader-election", "workload-high", "workload-low", "global-default", "catch-all"}

// TestTwelveConcurrentCreates: twelve clients, each on a connection of its own, create one
// RequestPriority each at the same moment (a barrier). The webhook admits all twelve (24
// shares fit its share rule, which does not know kube-apiserver's limit); the projector, the
// authority, projects the six first by (creationTimestamp, name), whatever their priorityLevel
// (given in the reverse order), and reports the others OverBudget. For five minutes, sampled
// every five seconds, the projected set, the native levels' UIDs (none deleted and re-created)
// and the OverBudget set stay the same, and every kept level keeps 90% or more of its nominal
// seats of before.
func TestTwelveConcurrentCreates(t *testing.T) {
	ctx := t.Context()
	waitWebhook(t)
	before := keptSeats(t)
	names := createAtOnce(t)
	expected := earliest(t, names)
	t.Logf("created %v; the earliest %d by (creationTimestamp, name): %v", names, fit, expected)

	var uids map[string]types.UID
	harness.Eventually(t, waitFor, "the earliest projected, the others OverBudget", func(ctx context.Context) error {
		var err error
		uids, err = decided(ctx, names, expected)
		return err
	})
	samples := 0
	for deadline := time.Now().Add(watchFor); time.Now().Before(deadline); time.Sleep(sampleStep) {
		now, err := decided(ctx, names, expected)
		if err != nil {
			t.Fatalf("after %d samples: %v", samples, err)
		}
		if !maps.Equal(now, uids) {
			t.Fatalf("after %d samples the native levels changed: %v, were %v", samples, now, uids)
		}
		if samples%3 == 0 {
			checkKept(t, before)
		}
		samples++
	}
	t.Logf("%d samples over %v: the same %d levels projected, the same native levels", samples, watchFor, fit)
}

// waitWebhook waits until the operator's webhook answers (a server-side dry run of a create).
func waitWebhook(t *testing.T) {
	t.Helper()
	harness.Eventually(t, waitFor, "the operator's webhook", func(ctx context.Context) error {
		probe := &flowv1.RequestPriority{ObjectMeta: metav1.ObjectMeta{Name: "probe"}, Spec: flowv1.RequestPrioritySpec{
			PriorityLevel: 9000, AssuredConcurrencyShares: ptr.To[int32](1), QueuesPerWidth: ptr.To[int32](1),
			QueueLengthLimit: ptr.To[int32](1)}}
		return suite.Client.Create(ctx, probe, client.DryRunAll)
	})
}

// createAtOnce creates the twelve RequestPriorities from twelve clients released together.
func createAtOnce(t *testing.T) []string {
	t.Helper()
	start := make(chan struct{})
	errs := make([]error, creators)
	names := make([]string, creators)
	var ready, done sync.WaitGroup
	for i := range creators {
		names[i] = fmt.Sprintf("tenant-%02d", i)
		c := separateClient(t)
		rp := &flowv1.RequestPriority{ObjectMeta: metav1.ObjectMeta{Name: names[i]}, Spec: flowv1.RequestPrioritySpec{
			PriorityLevel: int32(2000 - 10*i), AssuredConcurrencyShares: ptr.To[int32](shares), QueuesPerWidth: ptr.To[int32](16),
			HandSize: ptr.To[int32](4), QueueLengthLimit: ptr.To[int32](50)}}
		ready.Add(1)
		done.Go(func() {
			ready.Done()
			<-start
			errs[i] = c.Create(context.Background(), rp)
		})
	}
	ready.Wait()
	close(start)
	done.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("creating %s: %v", names[i], err)
		}
	}
	return names
}

// separateClient is an admin client on a connection of its own.
func separateClient(t *testing.T) client.Client {
	t.Helper()
	cfg := rest.CopyConfig(suite.Cluster.Config)
	cfg.Dial = (&net.Dialer{}).DialContext // a transport of its own, not client-go's shared one
	c, err := client.New(cfg, client.Options{Scheme: harness.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// earliest are the first fit names by (creationTimestamp, name).
func earliest(t *testing.T, names []string) []string {
	t.Helper()
	created := map[string]time.Time{}
	for _, n := range names {
		var rp flowv1.RequestPriority
		if err := suite.Client.Get(t.Context(), client.ObjectKey{Name: n}, &rp); err != nil {
			t.Fatal(err)
		}
		created[n] = rp.CreationTimestamp.Time
	}
	order := slices.Clone(names)
	sort.Slice(order, func(i, j int) bool {
		if a, b := created[order[i]], created[order[j]]; !a.Equal(b) {
			return a.Before(b)
		}
		return order[i] < order[j]
	})
	return order[:fit]
}

// decided checks that exactly the expected RequestPriorities are projected (the others
// OverBudget) and returns the UIDs of their native levels. It reads all RequestPriorities and
// native levels with one list each, not one read per object: it runs every five seconds.
func decided(ctx context.Context, names, expected []string) (map[string]types.UID, error) {
	var rps flowv1.RequestPriorityList
	if err := suite.Client.List(ctx, &rps); err != nil {
		return nil, err
	}
	var plcs flowcontrolv1.PriorityLevelConfigurationList
	if err := suite.Client.List(ctx, &plcs); err != nil {
		return nil, err
	}
	byName := map[string]*flowv1.RequestPriority{}
	for i := range rps.Items {
		byName[rps.Items[i].Name] = &rps.Items[i]
	}
	levels := map[string]types.UID{}
	for _, plc := range plcs.Items {
		levels[plc.Name] = plc.UID
	}
	uids := map[string]types.UID{}
	for _, n := range names {
		rp, ok := byName[n]
		if !ok {
			return nil, fmt.Errorf("%s: not found", n)
		}
		c := meta.FindStatusCondition(rp.Status.Conditions, flowv1.ConditionProjected)
		if c == nil || c.ObservedGeneration != rp.Generation {
			return nil, fmt.Errorf("%s: no Projected condition for its generation yet", n)
		}
		want := slices.Contains(expected, n)
		if got := c.Status == metav1.ConditionTrue; got != want {
			return nil, fmt.Errorf("%s: Projected=%s (%s: %s), want projected %v", n, c.Status, c.Reason, c.Message, want)
		}
		if !want {
			if c.Reason != flowv1.ReasonOverBudget {
				return nil, fmt.Errorf("%s: reason %s, want %s", n, c.Reason, flowv1.ReasonOverBudget)
			}
			continue
		}
		uid, ok := levels[rp.Status.NativeName]
		if !ok {
			return nil, fmt.Errorf("%s: native level %q not found", n, rp.Status.NativeName)
		}
		uids[n] = uid
	}
	return uids, nil
}

// keptSeats reads the kept levels' nominal seats.
func keptSeats(t *testing.T) map[string]float64 {
	t.Helper()
	g, err := harness.LevelGauges(t.Context(), suite.Cluster.Config, gaugeSeats)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, l := range keptLevels {
		v, ok := g[gaugeSeats][l]
		if !ok {
			t.Fatalf("no nominal seats for %s: %v", l, g[gaugeSeats])
		}
		out[l] = v
	}
	return out
}

// checkKept fails when a kept level has less than 90% of its nominal seats of before.
func checkKept(t *testing.T, before map[string]float64) {
	t.Helper()
	now := keptSeats(t)
	for l, v := range before {
		if 10*now[l] < 9*v {
			t.Errorf("%s has %v nominal seats, below 90%% of its %v before", l, now[l], v)
		}
	}
}
