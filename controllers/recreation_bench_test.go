package controllers

import (
	"context"
	"sort"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
)

// BenchmarkDefaultRecreation measures, per iteration, the time from deleting the only level-0
// RequestPriority (system-top) to a watch delivering its re-creation, and reports the p50 and
// p99 of those times. Run it with enough iterations for a p99, for example:
//
//	go test ./controllers/ -run '^$' -bench DefaultRecreation -benchtime 100x
func BenchmarkDefaultRecreation(b *testing.B) {
	resetCluster(b)
	startOperator(b, manageDefaults())
	waitAllReady(b, defaultNames, defaultNames)
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		times = append(times, recreation(b))
		b.StopTimer()
		waitRPReason(b, "system-top", "True/Accepted") // settle before the next trial
		b.StartTimer()
	}
	b.StopTimer()
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	p50, p99 := percentile(times, 50), percentile(times, 99)
	b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
	b.Logf("re-creation of a deleted default over %d trials: p50 %s, p99 %s, max %s", len(times), p50, p99, times[len(times)-1])
}

// recreation deletes system-top and returns how long until a watch shows a new system-top.
func recreation(b *testing.B) time.Duration {
	ctx := context.Background()
	old := getRP(b, "system-top")
	w, err := k8s.Watch(ctx, &flowv1.RequestPriorityList{}, client.MatchingFields{"metadata.name": "system-top"},
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: old.ResourceVersion}})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	start := time.Now()
	remove(b, old)
	timeout := time.After(waitTimeout)
	for {
		select {
		case e, open := <-w.ResultChan():
			if !open {
				b.Fatal("watch closed")
			}
			if rp, ok := e.Object.(*flowv1.RequestPriority); ok && e.Type == watch.Added && rp.UID != old.UID {
				return time.Since(start)
			}
		case <-timeout:
			b.Fatalf("system-top not recreated within %s", waitTimeout)
		}
	}
}

// percentile returns the p-th percentile of sorted durations (nearest rank).
func percentile(sorted []time.Duration, p int) time.Duration {
	rank := (len(sorted)*p + 99) / 100 // ceil(n * p / 100)
	return sorted[max(rank, 1)-1]
}
