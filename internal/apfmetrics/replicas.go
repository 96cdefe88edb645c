package apfmetrics

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
)

// ReadReplicas reads every kube-apiserver replica, by name (its address), through its own
// Getter, concurrently, and merges the reads (Merge): each replica has its own flow control
// and counters, so a read of one replica through a Service is not the cluster's. The merged
// snapshot's Replicas name the replicas read. Any failed read fails the whole: a sum missing
// a replica would read, the next time, as a counter that went backwards or a burst.
func ReadReplicas(ctx context.Context, replicas map[string]Getter) (*Snapshot, error) {
	if len(replicas) == 0 {
		return nil, fmt.Errorf("no kube-apiserver replica to read")
	}
	names := make([]string, 0, len(replicas))
	for name := range replicas {
		names = append(names, name)
	}
	sort.Strings(names)
	snaps, errs := make([]*Snapshot, len(names)), make([]error, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() {
			snaps[i], errs[i] = Read(ctx, replicas[name])
			if errs[i] != nil {
				errs[i] = fmt.Errorf("replica %s: %w", name, errs[i])
				return
			}
			snaps[i].Replicas = []string{name}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return Merge(snaps...), nil
}

// SameReplicas reports whether two snapshots were read from the same replicas (both read
// through a Service, with Replicas empty, count as the same), and if not says how they differ.
func SameReplicas(prev, cur *Snapshot) (bool, string) {
	if slices.Equal(prev.Replicas, cur.Replicas) {
		return true, ""
	}
	return false, fmt.Sprintf("the kube-apiserver replicas changed from [%s] to [%s]",
		strings.Join(prev.Replicas, " "), strings.Join(cur.Replicas, " "))
}
