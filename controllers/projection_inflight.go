package controllers

import (
	"sync"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
)

// inFlight remembers the native FlowSchemas the projector applied and when, until a snapshot
// listed after the write shows them. A projection round during a bulk apply writes for longer
// than snapshots take to come, so the next round often plans from a snapshot listed while the
// previous round still wrote: its cache does not hold those writes yet, and without this they
// would all be written again.
type inFlight struct {
	mu      sync.Mutex
	applied map[string]appliedSchema
}

type appliedSchema struct {
	at  time.Time
	obj *flowcontrolv1.FlowSchema
}

func newInFlight() *inFlight { return &inFlight{applied: map[string]appliedSchema{}} }

// record notes that obj was applied at (after) at.
func (f *inFlight) record(obj *flowcontrolv1.FlowSchema, at time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.applied[obj.Name] = appliedSchema{at: at, obj: obj}
}

// pending reports whether desired was applied after a snapshot listed at listedAt, as it is:
// that snapshot cannot show the write, and a later one will.
func (f *inFlight) pending(desired *flowcontrolv1.FlowSchema, listedAt time.Time) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	a, ok := f.applied[desired.Name]
	return ok && a.at.After(listedAt) && schemaUpToDate(desired, a.obj)
}

// forget drops the record of a FlowSchema a snapshot shows up to date (or no longer planned).
func (f *inFlight) forget(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.applied, name)
}
