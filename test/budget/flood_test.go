package budget_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/native/budget"
	"github.com/apf-operator/apf-operator/test/harness"
)

// The load: three clients list small ConfigMaps in a loop. The tenant floods its level;
// workload-low (a service account) and global-default (a plain user) are busy meanwhile.
const (
	loadNamespace  = "load"
	loadConfigMaps = 20
	loadBlob       = 16 << 10
	tenantWorkers  = 30
	busyWorkers    = 8
	// sampleFor is how long each flood is sampled once kube-apiserver has shared its seats out
	// on a whole period of it (see waitReallocated): one more 10 s period.
	sampleFor  = 10 * time.Second
	sampleStep = 2 * time.Second
	// reallocationPoll is how often waitReallocated reads kube-apiserver's /metrics.
	reallocationPoll = time.Second
	waitFor          = 90 * time.Second
	tenantUser       = "tenant"
	tenantName       = "tenant"
)

var busyLevels = []string{"workload-low", "global-default"}

// keptLevels are kube-apiserver's limited levels: the levels the operator does not own. (The
// gauges of a deleted level stay published, so the kept levels are named, not every series.)
var keptLevels = []string{"system", "node-high", "leader-election", "workload-high", "workload-low", "global-default", "catch-all"}

const (
	gaugeCurrent = "apiserver_flowcontrol_current_limit_seats"
	gaugeNominal = "apiserver_flowcontrol_nominal_limit_seats"
	gaugeLower   = "apiserver_flowcontrol_lower_limit_seats"
	gaugeUpper   = "apiserver_flowcontrol_upper_limit_seats"
	gaugeHigh    = "apiserver_flowcontrol_demand_seats_high_watermark"
	gaugeAverage = "apiserver_flowcontrol_demand_seats_average"
	gaugeStdev   = "apiserver_flowcontrol_demand_seats_stdev"
)

// floodFigures are the seats measured during one flood, after it settled.
type floodFigures struct {
	// minCurrent is the least current seats of each busy level, maxTenant the most of the
	// tenant's level, minKept the least sum of current seats over the kept levels.
	minCurrent map[string]float64
	maxTenant  float64
	minKept    float64
	// keptNominal is the kept levels' nominal seats; tenantUpper the tenant level's upper limit.
	keptNominal float64
	tenantUpper float64
}

func (f floodFigures) String() string {
	return fmt.Sprintf("workload-low ≥ %v, global-default ≥ %v, the tenant ≤ %v (upper limit %v), the kept levels together ≥ %v of %v nominal",
		f.minCurrent["workload-low"], f.minCurrent["global-default"], f.maxTenant, f.tenantUpper, f.minKept, f.keptNominal)
}

// TestBorrowingBoundWhileTenantFloods: a tenant's level of 12 shares (the whole budget at 60
// seats) floods while workload-low and global-default are busy. Before, with no borrowing limit
// (upper limit nominal + 60), it takes the seats the idle levels lend; with the projection's
// default borrowing limit it runs at most nominal + round(nominal × 50 / 100) seats, and every
// sample meets the budget's stated bounds (docs/enforcement.md, "Borrowing"): each busy level
// keeps at least kube-apiserver's floor max(lower limit, min(nominal, its demand high
// watermark)), and the kept levels together keep at least their nominal seats less the
// operator's levels' borrowing limits (less half a seat per level of kube-apiserver's rounding).
func TestBorrowingBoundWhileTenantFloods(t *testing.T) {
	ctx := t.Context()
	prepareLoad(t)

	// Before: the tenant's level as the projection wrote it before the borrowing rule.
	unbounded := unboundedTenant()
	createAll(t, unbounded...)
	waitLevelKnown(t, "budget-tenant-unbounded")
	before := flood(t, "budget-tenant-unbounded")
	t.Logf("before (no borrowing limit): %s", before)
	for _, obj := range unbounded {
		if err := suite.Client.Delete(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}

	// After: the operator projects the tenant's RequestPriority, borrowing limit absent.
	createAll(t, tenantObjects()...)
	level := waitProjected(t)
	after := flood(t, level)
	t.Logf("after (borrowing limit defaulted to %d): %s", budget.DefaultBorrowingLimitPercent, after)
	if after.maxTenant > after.tenantUpper {
		t.Errorf("the tenant's level ran %v seats, above its upper limit %v", after.maxTenant, after.tenantUpper)
	}
	if after.tenantUpper >= before.tenantUpper {
		t.Errorf("the tenant's upper limit is %v with the default borrowing limit, %v without: not bounded", after.tenantUpper, before.tenantUpper)
	}
}

// flood runs the three loads until kube-apiserver has shared its seats out on a whole period
// of them (waitReallocated), then samples the seats every sampleStep for sampleFor; with a
// projected (bounded) tenant level it checks the bounds in every sample.
func flood(t *testing.T, tenantLevel string) floodFigures {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel() // before the Wait: the loads end with the sampling
	for _, load := range []struct {
		cfg     *rest.Config
		workers int
	}{
		{impersonating(tenantUser), tenantWorkers},
		{impersonating("system:serviceaccount:"+loadNamespace+":busy", "system:serviceaccounts", "system:serviceaccounts:"+loadNamespace), busyWorkers},
		{impersonating("busy-user"), busyWorkers},
	} {
		c := httpClient(t, load.cfg)
		url := strings.TrimSuffix(suite.Cluster.Config.Host, "/") + "/api/v1/namespaces/" + loadNamespace + "/configmaps"
		wg.Go(func() { harness.Flood(ctx, c, url, load.workers, 2*waitFor) })
	}
	waitReallocated(t, tenantLevel)
	figures := floodFigures{minCurrent: map[string]float64{}, minKept: -1}
	bounded := tenantLevel != "budget-tenant-unbounded"
	for deadline := time.Now().Add(sampleFor); ; time.Sleep(sampleStep) {
		g, err := harness.LevelGauges(ctx, suite.Cluster.Config, gaugeCurrent, gaugeNominal, gaugeLower, gaugeUpper, gaugeHigh)
		if err != nil {
			t.Fatal(err)
		}
		figures.record(g, tenantLevel)
		if bounded {
			checkBounds(t, g, tenantLevel)
		}
		if time.Now().After(deadline) {
			return figures
		}
	}
}

// waitReallocated waits, instead of a fixed warm-up, until kube-apiserver has shared its seats
// out twice (every 10 s) with the tenant's demand in its figures: the first time on the part
// of a period the loads had run, the second on a whole period of them. A new sharing-out shows
// as new demand figures of the tenant's level (average, deviation, high watermark: a period's
// own figures, which a running load does not repeat exactly); before the loads the level has
// none or zeros. The loads started together, so the busy levels' figures are of the same
// whole period.
func waitReallocated(t *testing.T, tenantLevel string) {
	t.Helper()
	ctx := t.Context()
	var last [3]float64
	seen := 0
	for deadline := time.Now().Add(waitFor); seen < 2; time.Sleep(reallocationPoll) {
		g, err := harness.LevelGauges(ctx, suite.Cluster.Config, gaugeAverage, gaugeStdev, gaugeHigh)
		if err != nil {
			t.Fatal(err)
		}
		now := [3]float64{g[gaugeAverage][tenantLevel], g[gaugeStdev][tenantLevel], g[gaugeHigh][tenantLevel]}
		if now != last && now[0] > 0 {
			seen++
		}
		last = now
		if time.Now().After(deadline) {
			t.Fatalf("kube-apiserver shared its seats out %d times in %s with the tenant's demand in its figures, want 2 (last %v)", seen, waitFor, now)
		}
	}
}

func (f *floodFigures) record(g map[string]map[string]float64, tenantLevel string) {
	for _, l := range busyLevels {
		if v, ok := f.minCurrent[l]; !ok || g[gaugeCurrent][l] < v {
			f.minCurrent[l] = g[gaugeCurrent][l]
		}
	}
	f.maxTenant = max(f.maxTenant, g[gaugeCurrent][tenantLevel])
	f.tenantUpper = g[gaugeUpper][tenantLevel]
	kept, nominal := keptSums(g)
	if f.minKept < 0 || kept < f.minKept {
		f.minKept = kept
	}
	f.keptNominal = nominal
}

// keptSums are the current and nominal seats of the kept levels together.
func keptSums(g map[string]map[string]float64) (current, nominal float64) {
	for _, l := range keptLevels {
		current += g[gaugeCurrent][l]
		nominal += g[gaugeNominal][l]
	}
	return current, nominal
}

// checkBounds checks one sample against the budget's stated bounds.
func checkBounds(t *testing.T, g map[string]map[string]float64, tenantLevel string) {
	t.Helper()
	for _, l := range busyLevels {
		floor := max(g[gaugeLower][l], min(g[gaugeNominal][l], g[gaugeHigh][l]))
		if g[gaugeCurrent][l] < floor {
			t.Errorf("%s has %v seats, below max(lower %v, min(nominal %v, demand high watermark %v))",
				l, g[gaugeCurrent][l], g[gaugeLower][l], g[gaugeNominal][l], g[gaugeHigh][l])
		}
	}
	borrowing := g[gaugeUpper][tenantLevel] - g[gaugeNominal][tenantLevel]
	current, nominal := keptSums(g)
	levels := float64(len(keptLevels) + 1)
	if current < nominal-borrowing-levels/2 {
		t.Errorf("the kept levels hold %v seats, below their %v nominal less the tenant's borrowing %v and rounding %v",
			current, nominal, borrowing, levels/2)
	}
}

// impersonating is the admin's config acting as user (in system:authenticated and groups).
func impersonating(user string, groups ...string) *rest.Config {
	cfg := rest.CopyConfig(suite.Cluster.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: append(groups, "system:authenticated")}
	cfg.QPS, cfg.Burst = -1, 0
	return cfg
}

func httpClient(t *testing.T, cfg *rest.Config) *http.Client {
	t.Helper()
	c, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// prepareLoad creates the ConfigMaps the loads list and lets every authenticated user list them.
func prepareLoad(t *testing.T) {
	t.Helper()
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: loadNamespace}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "budget-list-configmaps"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"list"}}}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "budget-list-configmaps"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "budget-list-configmaps"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "system:authenticated"}}},
	}
	blob := strings.Repeat("x", loadBlob)
	for i := range loadConfigMaps {
		objs = append(objs, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("blob-%02d", i), Namespace: loadNamespace},
			Data: map[string]string{"blob": blob}})
	}
	createAll(t, objs...)
}

func createAll(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, obj := range objs {
		if err := suite.Client.Create(t.Context(), obj); err != nil {
			t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
		}
	}
}

// unboundedTenant is the tenant's level and schema as the projection wrote them before the
// borrowing rule: 12 shares, no borrowingLimitPercent (kube-apiserver: no limit).
func unboundedTenant() []client.Object {
	return []client.Object{
		&flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "budget-tenant-unbounded"},
			Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
				Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: ptr.To[int32](12),
					LendablePercent: ptr.To[int32](0), LimitResponse: tenantQueuing()}}},
		&flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: "budget-tenant-unbounded"},
			Spec: flowcontrolv1.FlowSchemaSpec{PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "budget-tenant-unbounded"},
				MatchingPrecedence: 500, Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
					Subjects: []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: tenantUser}}},
					ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"},
						Resources: []string{"*"}, Namespaces: []string{"*"}, ClusterScope: true}}}}}},
	}
}

func tenantQueuing() flowcontrolv1.LimitResponse {
	return flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeQueue,
		Queuing: &flowcontrolv1.QueuingConfiguration{Queues: 64, HandSize: 6, QueueLengthLimit: 50}}
}

// tenantObjects are the tenant's RequestPriority (no borrowingLimitPercent) and FlowSchema.
func tenantObjects() []client.Object {
	return []client.Object{
		&flowv1.RequestPriority{ObjectMeta: metav1.ObjectMeta{Name: tenantName}, Spec: flowv1.RequestPrioritySpec{
			PriorityLevel: 5000, AssuredConcurrencyShares: ptr.To[int32](12), QueuesPerWidth: ptr.To[int32](64),
			HandSize: ptr.To[int32](6), QueueLengthLimit: ptr.To[int32](50)}},
		&flowv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: tenantName}, Spec: flowv1.FlowSchemaSpec{
			MatchingPriority: 1000, RequestPriority: flowv1.RequestPriorityReference{Name: tenantName},
			Match: []flowv1.Conjunction{{And: []flowv1.AtomicTest{{Equals: &flowv1.ValueTest{Field: flowv1.FieldUser, Value: tenantUser}}}}}}},
	}
}

// waitLevelKnown waits for kube-apiserver to publish seats for level.
func waitLevelKnown(t *testing.T, level string) {
	t.Helper()
	harness.Eventually(t, waitFor, "kube-apiserver's seats of "+level, func(ctx context.Context) error {
		g, err := harness.LevelGauges(ctx, suite.Cluster.Config, gaugeNominal)
		if err != nil {
			return err
		}
		if _, ok := g[gaugeNominal][level]; !ok {
			return fmt.Errorf("no nominal seats for %s yet", level)
		}
		return nil
	})
}

// waitProjected waits for the tenant's RequestPriority and FlowSchema to be projected, checks
// that the status says the borrowing limit was defaulted and that the native level has it, and
// returns the native level's name once kube-apiserver publishes its seats.
func waitProjected(t *testing.T) string {
	t.Helper()
	var rp flowv1.RequestPriority
	harness.Eventually(t, waitFor, "the tenant's projection", func(ctx context.Context) error {
		var fs flowv1.FlowSchema
		if err := suite.Client.Get(ctx, client.ObjectKey{Name: tenantName}, &rp); err != nil {
			return err
		}
		if err := suite.Client.Get(ctx, client.ObjectKey{Name: tenantName}, &fs); err != nil {
			return err
		}
		if err := harness.ProjectedNow(&rp); err != nil {
			return err
		}
		return harness.ProjectedNow(&fs)
	})
	var plc flowcontrolv1.PriorityLevelConfiguration
	if err := suite.Client.Get(t.Context(), client.ObjectKey{Name: rp.Status.NativeName}, &plc); err != nil {
		t.Fatal(err)
	}
	if got := ptr.Deref(plc.Spec.Limited.BorrowingLimitPercent, -1); got != budget.DefaultBorrowingLimitPercent {
		t.Errorf("native level %s: borrowingLimitPercent %d, want the default %d", plc.Name, got, budget.DefaultBorrowingLimitPercent)
	}
	projected := findCondition(rp.Status.Conditions)
	if want := fmt.Sprintf("gets the operator's default %d", budget.DefaultBorrowingLimitPercent); !strings.Contains(projected, want) {
		t.Errorf("the Projected condition does not say the borrowing limit was defaulted (%q): %s", want, projected)
	}
	waitLevelKnown(t, plc.Name)
	return plc.Name
}

func findCondition(conds []metav1.Condition) string {
	for _, c := range conds {
		if c.Type == flowv1.ConditionProjected {
			return c.Message
		}
	}
	return ""
}
