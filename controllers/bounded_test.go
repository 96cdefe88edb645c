package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/native/worstcase"
)

// maxWorstCaseGrowth bounds the growth of the process's resident memory while the operator
// works through every adversarial FlowSchema: the chart's memory limit is 512Mi, and this
// leaves most of it to the caches of a fleet.
const maxWorstCaseGrowth = 128 << 20

// worstCasesTimeout bounds the wait for every adversarial FlowSchema's status.
const worstCasesTimeout = 5 * time.Minute

// TestPeakMemoryWorstCasesLive stores every adversarial FlowSchema of package worstcase that
// kube-apiserver accepts (etcd refuses values over 1.5 MiB) on a real API server, with the
// webhook absent (as after an outage), and runs the operator with native enforcement: each ends
// NotExpressible (or invalid for the regex budget) with a field path, the realistic ones
// projected, and the process's resident memory at its peak (the kernel's high-water mark, which
// no sampling can miss) exceeds what it was before the operator started by less than 128 MiB.
func TestPeakMemoryWorstCasesLive(t *testing.T) {
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
	base := resetPeakResident(t)
	startOperator(t, operatorConfig{options: Options{Enforcement: EnforcementNative}})
	// The adversarial cases take the projector seconds each on a loaded machine: one deadline
	// for all of them, longer than eventually's.
	deadline := time.Now().Add(worstCasesTimeout)
	for _, c := range cases {
		for err := worstCaseSettled(ctx, c); err != nil; err = worstCaseSettled(ctx, c) {
			if time.Now().After(deadline) {
				t.Fatalf("gave up after %s: %v", worstCasesTimeout, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	peak := peakResident(t)
	t.Logf("%d adversarial FlowSchemas stored; resident %d MiB before the operator, %d MiB at its peak",
		len(cases), base>>20, peak>>20)
	if peak > base+maxWorstCaseGrowth {
		t.Errorf("the process's resident memory grew by %d MiB at its peak; want under %d MiB",
			(peak-base)>>20, maxWorstCaseGrowth>>20)
	}
}

// resetPeakResident returns the freed heap to the kernel, so that any later growth of the heap
// must fault pages in again, then resets the kernel's high-water mark of the process's
// resident memory (VmHWM, writing 5 to /proc/self/clear_refs: proc(5)) to the current
// resident size, which it returns. From then on VmHWM is the largest resident size the
// process reaches, kept by the kernel at every page fault: unlike sampling, it cannot miss a
// peak between two samples. It bounds the heap's growth from above, and it is what a
// container's memory limit counts.
func resetPeakResident(t *testing.T) uint64 {
	t.Helper()
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Fatalf("resetting the peak resident size: %v", err)
	}
	return procStatus(t, "VmRSS")
}

// peakResident returns the largest resident size of the process since resetPeakResident.
func peakResident(t *testing.T) uint64 { return procStatus(t, "VmHWM") }

// procStatus returns a size field of /proc/self/status (in kB there) in bytes.
func procStatus(t *testing.T, field string) uint64 {
	t.Helper()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(status)) {
		value, ok := strings.CutPrefix(line, field+":")
		if !ok {
			continue
		}
		kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		if err != nil {
			t.Fatalf("/proc/self/status %s: %v", strings.TrimSpace(line), err)
		}
		return kb << 10
	}
	t.Fatalf("/proc/self/status has no %s", field)
	return 0
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

// TestPeakMemoryCatchesAShortPeak checks the measurement TestPeakMemoryWorstCasesLive relies on: a
// peak freed before anyone looks is still counted, and the reset forgets the peaks before it.
func TestPeakMemoryCatchesAShortPeak(t *testing.T) {
	const spike = 256 << 20
	touchAndFree := func() {
		b := make([]byte, spike)
		for i := 0; i < len(b); i += os.Getpagesize() {
			b[i] = 1
		}
		runtime.KeepAlive(b)
	}
	base := resetPeakResident(t)
	touchAndFree()
	debug.FreeOSMemory()
	if now := procStatus(t, "VmRSS"); now >= base+spike/2 {
		t.Fatalf("the freed %d MiB are still resident (%d MiB over the base): the peak was not short", spike>>20, (now-base)>>20)
	}
	// Not the whole spike: pages resident at the base (the scavenger's) may leave meanwhile.
	if peak := peakResident(t); peak < base+spike*7/8 {
		t.Errorf("a freed peak of %d MiB raised the high-water mark by only %d MiB", spike>>20, (peak-base)>>20)
	}
	base = resetPeakResident(t)
	if peak := peakResident(t); peak >= base+spike/2 {
		t.Errorf("after a reset the high-water mark still holds %d MiB of an earlier peak", (peak-base)>>20)
	}
}
