package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/native/worstcase"
)

// maxWorstCaseHeap bounds the operator's heap growth with every adversarial FlowSchema stored:
// the chart's memory limit is 512Mi, and this leaves most of it to the caches of a fleet.
const maxWorstCaseHeap = 128 << 20

// TestWorstCasesLive stores every adversarial FlowSchema of package worstcase that
// kube-apiserver accepts (etcd refuses values over 1.5 MiB) on a real API server, with the
// webhook absent (as after an outage), and runs the operator with native enforcement: each ends
// NotExpressible (or invalid for the regex budget) with a field path, the realistic ones
// projected, and the operator's heap (HeapInuse, sampled while it works) grows by less than
// 128 MiB.
func TestWorstCasesLive(t *testing.T) {
	resetCluster(t)
	ctx := context.Background()
	create(t, userRP("target", 4321))
	var cases []worstcase.Case
	for _, c := range worstcase.FlowSchemas("target") {
		if raw, _ := json.Marshal(c.FlowSchema()); len(raw) > 3<<19 {
			t.Logf("%s: %d KiB, over etcd's 1.5 MiB: not stored", c.Name, len(raw)>>10)
			continue
		}
		create(t, c.FlowSchema())
		cases = append(cases, c)
	}
	base := heapInuse()
	peak := base
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond):
				peak = max(peak, heapInuse())
			}
		}
	}()
	startOperator(t, operatorConfig{options: Options{Enforcement: EnforcementNative}})
	for _, c := range cases {
		eventually(t, func() error { return worstCaseSettled(ctx, c) })
	}
	close(done)
	<-sampled
	t.Logf("%d adversarial FlowSchemas stored; heap in use %d MiB before the operator, %d MiB at its peak",
		len(cases), base>>20, peak>>20)
	if peak-base > maxWorstCaseHeap {
		t.Errorf("the operator's heap grew by %d MiB; want under %d MiB", (peak-base)>>20, maxWorstCaseHeap>>20)
	}
}

func heapInuse() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// worstCaseSettled checks a case's status: projected for a realistic case, else
// Projected=False for NotExpressible or Ready=False for an invalid spec, naming spec.match.
func worstCaseSettled(ctx context.Context, c worstcase.Case) error {
	var fs flowv1.FlowSchema
	if err := k8s.Get(ctx, client.ObjectKey{Name: c.Name}, &fs); err != nil {
		return err
	}
	ready := meta.FindStatusCondition(fs.Status.Conditions, flowv1.ConditionReady)
	projected := meta.FindStatusCondition(fs.Status.Conditions, flowv1.ConditionProjected)
	switch {
	case ready == nil || projected == nil || fs.Status.ObservedGeneration != fs.Generation:
		return fmt.Errorf("%s: no current status yet", c.Name)
	case c.Expressible && projected.Reason != flowv1.ReasonProjected:
		return fmt.Errorf("%s: Projected %s/%s; want True/Projected", c.Name, projected.Status, projected.Reason)
	case c.Expressible:
		return nil
	case projected.Reason == flowv1.ReasonNotExpressible && strings.Contains(projected.Message, "spec.match["):
		return nil
	case ready.Reason == flowv1.ReasonInvalidSpec && strings.Contains(ready.Message, "spec.match["):
		return nil
	}
	return fmt.Errorf("%s: Ready %s (%.200s), Projected %s (%.200s); want NotExpressible or InvalidSpec naming spec.match",
		c.Name, ready.Reason, ready.Message, projected.Reason, projected.Message)
}
