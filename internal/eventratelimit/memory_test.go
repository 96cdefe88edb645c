package eventratelimit

import (
	"runtime"
	"strconv"
	"testing"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

// floodKeys is the number of distinct source+object keys of the flood.
const floodKeys = 1_000_000

// TestKeyFloodBoundedMemory floods one SourceAndObject limit with a million distinct keys:
// the engine must hold exactly cacheSize buckets, and the heap must grow by no more than
// cacheSize buckets' worth (bytesPerBucketBound each), far below what a million would take.
func TestKeyFloodBoundedMemory(t *testing.T) {
	const cacheSize = 4096
	// A bucket costs its key (~80 bytes here), a rate.Limiter, an LRU list element and a map
	// slot: a few hundred bytes. 2 KiB each leaves room for the allocator's slack while a
	// million buckets would exceed the bound 250 times over.
	const bytesPerBucketBound = 2048
	e := New(clocktesting.NewFakePassiveClock(t0), nil)
	e.Update([]Config{limitOf(v1alpha1.EventRateLimitSourceAndObject, 1, 1, cacheSize)})
	before := heapInUse()
	src := Source{Component: "kubelet", Host: "node-1"}
	buf := make([]byte, 0, 16)
	for i := range floodKeys {
		buf = strconv.AppendInt(buf[:0], int64(i), 10)
		a := Attributes{Namespace: "ns", SourceAndObject: SourceAndObjectKey(src, Object{
			APIVersion: "v1", Kind: "Pod", Namespace: "ns", Name: "pod-" + string(buf), UID: string(buf)})}
		if !e.Admit(&a).Allowed {
			t.Fatalf("key %d is new and must find a full bucket", i)
		}
	}
	if n := e.BucketCount(string(v1alpha1.EventRateLimitSourceAndObject), v1alpha1.EventRateLimitSourceAndObject); n != cacheSize {
		t.Fatalf("%d buckets after %d keys, want cacheSize %d", n, floodKeys, cacheSize)
	}
	growth := heapInUse() - before
	t.Logf("heap growth after %d keys: %d bytes (%d per cached bucket)", floodKeys, growth, growth/cacheSize)
	if growth > cacheSize*bytesPerBucketBound {
		t.Fatalf("heap grew by %d bytes, more than %d buckets × %d bytes", growth, cacheSize, bytesPerBucketBound)
	}
	runtime.KeepAlive(e)
}

// heapInUse returns the live heap after a full collection.
func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
