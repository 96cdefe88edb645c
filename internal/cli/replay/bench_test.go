package replay

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/apf-operator/apf-operator/internal/manifest"
	"github.com/apf-operator/apf-operator/internal/nativeview"
)

// benchClassifiers are the benchmark's configurations: kube-apiserver's bootstrap objects as
// the current one, testdata/proposed.yaml projected onto them as the proposed one.
func benchClassifiers(tb testing.TB) (Classifier, Classifier) {
	tb.Helper()
	base := nativeview.BootstrapObjects()
	rps, fss, err := manifest.LoadObjects([]string{"testdata/proposed.yaml"}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	proposed := projectObjects(rps, fss, base)
	return NewNativeClassifier(base.FlowSchemas, base.PriorityLevels),
		NewNativeClassifier(proposed.FlowSchemas, proposed.PriorityLevels)
}

// BenchmarkReplay1M replays one million audit events (a synthetic, seeded log at level
// Metadata, about 0.9 KB per event, written to a file first) end to end: reading the file,
// decoding, classifying under two configurations, tallying and building the report. One
// iteration is the whole million; ns/op is the wall time of a replay.
func BenchmarkReplay1M(b *testing.B) {
	const n = 1_000_000
	path := filepath.Join(b.TempDir(), "audit.log")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := writeSyntheticLog(f, n, 1); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	info, _ := os.Stat(path)
	current, proposed := benchClassifiers(b)
	b.SetBytes(info.Size())
	b.ReportAllocs()
	cpu0 := cpuTime()
	b.ResetTimer()
	for range b.N {
		e := NewEngine(current, proposed, time.Minute)
		stats, err := Replay(e, []Input{{Name: path}}, nil)
		if err != nil {
			b.Fatal(err)
		}
		r, err := e.Report(stats)
		if err != nil {
			b.Fatal(err)
		}
		if r.Requests != n || stats.BadLines != 0 {
			b.Fatalf("replayed %d requests, %d bad lines; want %d and 0", r.Requests, stats.BadLines, n)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/event")
	// The CPU time the process spent (all goroutines), which a machine loaded by other work
	// inflates less than the wall time.
	b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
