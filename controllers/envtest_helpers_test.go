package controllers

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/defaults"
)

// The kinds as events and the defaults metrics name them.
const (
	kindRequestPriority = "RequestPriority"
	kindFlowSchema      = "FlowSchema"
)

var defaultNames = []string{"system-top", "system-high", "system-low", "workload-high", "workload-low"}

// waitRPReason waits until the RequestPriority's current Ready condition reads want, for
// example "True/Accepted".
func waitRPReason(t testing.TB, name, want string) {
	t.Helper()
	eventually(t, func() error {
		var rp flowv1.RequestPriority
		if err := k8s.Get(context.Background(), client.ObjectKey{Name: name}, &rp); err != nil {
			return err
		}
		if got := readyReason(rp.Status.Conditions, rp.Generation, rp.Status.ObservedGeneration); got != want {
			return fmt.Errorf("RequestPriority %s: Ready %s, want %s", name, got, want)
		}
		return nil
	})
}

func waitFSReason(t testing.TB, name, want string) {
	t.Helper()
	eventually(t, func() error {
		var fs flowv1.FlowSchema
		if err := k8s.Get(context.Background(), client.ObjectKey{Name: name}, &fs); err != nil {
			return err
		}
		if got := readyReason(fs.Status.Conditions, fs.Generation, fs.Status.ObservedGeneration); got != want {
			return fmt.Errorf("FlowSchema %s: Ready %s, want %s", name, got, want)
		}
		return nil
	})
}

// waitAllReady waits until exactly the named objects of each kind exist, all Ready=True.
// listOurs lists every RequestPriority and FlowSchema in the cluster.
func listOurs(ctx context.Context) (*flowv1.RequestPriorityList, *flowv1.FlowSchemaList, error) {
	var rps flowv1.RequestPriorityList
	var fss flowv1.FlowSchemaList
	if err := k8s.List(ctx, &rps); err != nil {
		return nil, nil, err
	}
	if err := k8s.List(ctx, &fss); err != nil {
		return nil, nil, err
	}
	return &rps, &fss, nil
}

// pending reports whether the object's native projection is still being written.
func pending(conds []metav1.Condition) bool {
	c := meta.FindStatusCondition(conds, flowv1.ConditionProjected)
	return c != nil && c.Reason == flowv1.ReasonPending
}

func waitAllReady(t testing.TB, rpNames, fsNames []string) {
	t.Helper()
	eventually(t, func() error {
		rps, fss, err := listOurs(context.Background())
		if err != nil {
			return err
		}
		var got, notReady []string
		for _, rp := range rps.Items {
			got = append(got, "rp/"+rp.Name)
			if r := readyReason(rp.Status.Conditions, rp.Generation, rp.Status.ObservedGeneration); r != "True/Accepted" {
				notReady = append(notReady, "rp/"+rp.Name+": "+r)
			}
			if pending(rp.Status.Conditions) {
				notReady = append(notReady, "rp/"+rp.Name+": projection pending")
			}
		}
		for _, fs := range fss.Items {
			got = append(got, "fs/"+fs.Name)
			if r := readyReason(fs.Status.Conditions, fs.Generation, fs.Status.ObservedGeneration); r != "True/Accepted" {
				notReady = append(notReady, "fs/"+fs.Name+": "+r)
			}
			if pending(fs.Status.Conditions) {
				notReady = append(notReady, "fs/"+fs.Name+": projection pending")
			}
		}
		if want := kindNames(rpNames, fsNames); strings.Join(sorted(got), ",") != strings.Join(want, ",") {
			return fmt.Errorf("objects %v, want %v", sorted(got), want)
		}
		if len(notReady) > 0 {
			return fmt.Errorf("not ready: %v", notReady)
		}
		return converged(rps.Items, fss.Items)
	})
}

// converged checks that every object's status is the one the effective configuration of
// these objects gives it: nothing is left for the status reconcilers to write.
func converged(rps []flowv1.RequestPriority, fss []flowv1.FlowSchema) error {
	cfg := effective.Compute(rps, fss)
	for _, rp := range rps {
		st := cfg.RequestPriorityStatus[rp.Name]
		if rp.Status.FlowSchemas != st.FlowSchemas || rp.Status.AssuredConcurrencyFraction != st.AssuredFraction {
			return fmt.Errorf("RequestPriority %s: flowSchemas %d, fraction %q; effective %d, %q", rp.Name,
				rp.Status.FlowSchemas, rp.Status.AssuredConcurrencyFraction, st.FlowSchemas, st.AssuredFraction)
		}
		if err := conditionIs(rp.Status.Conditions, st); err != nil {
			return fmt.Errorf("RequestPriority %s: %w", rp.Name, err)
		}
	}
	for _, fs := range fss {
		if err := conditionIs(fs.Status.Conditions, cfg.FlowSchemaStatus[fs.Name]); err != nil {
			return fmt.Errorf("FlowSchema %s: %w", fs.Name, err)
		}
	}
	return nil
}

func conditionIs(conditions []metav1.Condition, st effective.Status) error {
	c := meta.FindStatusCondition(conditions, flowv1.ConditionReady)
	if c == nil || c.Reason != st.Reason || c.Message != st.Message || (c.Status == metav1.ConditionTrue) != st.InEffect {
		return fmt.Errorf("condition %+v, effective %+v", c, st)
	}
	return nil
}

func kindNames(rpNames, fsNames []string) []string {
	var out []string
	for _, n := range rpNames {
		out = append(out, "rp/"+n)
	}
	for _, n := range fsNames {
		out = append(out, "fs/"+n)
	}
	return sorted(out)
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

// defaultRP and defaultFS return the named default object as internal/defaults declares it.
func defaultRP(name string) flowv1.RequestPriority {
	if rp, ok := defaults.RequestPriority(name); ok {
		return rp
	}
	panic("no default RequestPriority " + name)
}

func defaultFS(name string) flowv1.FlowSchema {
	if fs, ok := defaults.FlowSchema(name); ok {
		return fs
	}
	panic("no default FlowSchema " + name)
}

// isDefault reports whether obj carries the operator's marks and the default spec.
func isDefaultRP(rp *flowv1.RequestPriority) bool {
	d := defaultRP(rp.Name)
	return defaults.Owned(rp) && equality.Semantic.DeepEqual(rp.Spec, d.Spec)
}

// userRP makes a RequestPriority as a user would: no label, no annotation.
func userRP(name string, level int32) *flowv1.RequestPriority {
	rp := &flowv1.RequestPriority{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: flowv1.RequestPrioritySpec{PriorityLevel: level}}
	if level != 0 {
		rp.Spec.AssuredConcurrencyShares = ptr.To[int32](20)
		rp.Spec.QueuesPerWidth = ptr.To[int32](64)
		rp.Spec.HandSize = ptr.To[int32](8)
		rp.Spec.QueueLengthLimit = ptr.To[int32](30)
	}
	return rp
}

func userFS(name, target string) *flowv1.FlowSchema {
	return &flowv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: flowv1.FlowSchemaSpec{
		MatchingPriority: 50, RequestPriority: flowv1.RequestPriorityReference{Name: target},
		Match: []flowv1.Conjunction{{And: []flowv1.AtomicTest{{Equals: &flowv1.ValueTest{Field: flowv1.FieldUser, Value: "alice"}}}}}}}
}

func create(t testing.TB, obj client.Object) {
	t.Helper()
	if err := k8s.Create(context.Background(), obj); err != nil {
		t.Fatalf("creating %s: %v", obj.GetName(), err)
	}
}

func remove(t testing.TB, obj client.Object) {
	t.Helper()
	if err := k8s.Delete(context.Background(), obj); err != nil && !apierrors.IsNotFound(err) {
		t.Fatalf("deleting %s: %v", obj.GetName(), err)
	}
}

// updateRP applies edit to the current version of the named object and writes it back,
// retrying when the operator's status write came in between.
func updateRP(t testing.TB, name string, edit func(*flowv1.RequestPriority)) {
	t.Helper()
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		rp := getRP(t, name)
		edit(rp)
		return k8s.Update(context.Background(), rp)
	}); err != nil {
		t.Fatalf("updating RequestPriority %s: %v", name, err)
	}
}

func updateFS(t testing.TB, name string, edit func(*flowv1.FlowSchema)) {
	t.Helper()
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		fs := getFS(t, name)
		edit(fs)
		return k8s.Update(context.Background(), fs)
	}); err != nil {
		t.Fatalf("updating FlowSchema %s: %v", name, err)
	}
}

// afterCreationSecond waits until the clock has left the second of obj's creationTimestamp,
// which has a one-second resolution: an object created next is then strictly younger.
func afterCreationSecond(t testing.TB, obj metav1.Object) {
	t.Helper()
	eventually(t, func() error {
		if !time.Now().Truncate(time.Second).After(obj.GetCreationTimestamp().Time) {
			return fmt.Errorf("still in the creation second of %s", obj.GetName())
		}
		return nil
	})
}

// barrier proves that the defaults reconciler has decided on everything that happened before
// it: it edits the owned defaults RequestPriority rpName and FlowSchema fsName and waits for
// both repairs. Events of one kind reach the cache in order, the cache only moves forward and a
// pass creates before it repairs; so the later of the two repairing passes ran on a cache
// holding every earlier change of both kinds, and any creation it wanted is done once its
// repair is visible. This replaces sleeping before asserting that something did not happen.
func barrier(t testing.TB, rpName, fsName string) {
	t.Helper()
	updateRP(t, rpName, func(rp *flowv1.RequestPriority) { rp.Spec.QueueLengthLimit = ptr.To[int32](1) })
	updateFS(t, fsName, func(fs *flowv1.FlowSchema) { fs.Spec.MatchingPriority++ })
	eventually(t, func() error {
		if rp := getRP(t, rpName); !isDefaultRP(rp) {
			return fmt.Errorf("RequestPriority %s not repaired yet", rpName)
		}
		if fs := getFS(t, fsName); !equality.Semantic.DeepEqual(fs.Spec, defaultFS(fsName).Spec) {
			return fmt.Errorf("FlowSchema %s not repaired yet", fsName)
		}
		return nil
	})
}

// waitEvent waits until an event with the reason regards the named object.
func waitEvent(t testing.TB, kind, name, reason string) {
	t.Helper()
	eventually(t, func() error {
		var list eventsv1.EventList
		if err := k8s.List(context.Background(), &list); err != nil {
			return err
		}
		for _, e := range list.Items {
			if e.Regarding.Kind == kind && e.Regarding.Name == name && e.Reason == reason {
				return nil
			}
		}
		return fmt.Errorf("no %s event for %s %s among %d events", reason, kind, name, len(list.Items))
	})
}
