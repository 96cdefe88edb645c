package controllers

import (
	"context"
	"hash/fnv"
	"strconv"
	"sync"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/native"
)

// snapshot is the effective configuration of the cached objects and, when the operator
// projects, its projection and the native objects it was computed against.
type snapshot struct {
	cfg     *effective.Config
	plan    *native.Plan // nil when enforcement is none
	natives native.Existing
}

// snapshots computes the snapshot from the cache once per distinct state of the objects it
// depends on (uid and generation of ours, uid and resourceVersion of the native ones) and
// shares it among the status reconcilers and the projector, so a burst of events for many
// objects compiles the configuration once.
type snapshots struct {
	project bool

	mu   sync.Mutex
	key  uint64
	last *snapshot
}

func newSnapshots(project bool) *snapshots { return &snapshots{project: project} }

// get returns the snapshot of what the cache holds now.
func (s *snapshots) get(ctx context.Context, c client.Reader) (*snapshot, error) {
	var rps flowv1.RequestPriorityList
	if err := c.List(ctx, &rps); err != nil {
		return nil, err
	}
	var fss flowv1.FlowSchemaList
	if err := c.List(ctx, &fss); err != nil {
		return nil, err
	}
	var natives native.Existing
	if s.project {
		var err error
		if natives, err = listNatives(ctx, c); err != nil {
			return nil, err
		}
	}
	key := stateKey(&rps, &fss, &natives)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last != nil && s.key == key {
		return s.last, nil
	}
	snap := &snapshot{cfg: effective.Compute(rps.Items, fss.Items), natives: natives}
	if s.project {
		snap.plan = native.Project(snap.cfg, natives)
	}
	s.key, s.last = key, snap
	return snap, nil
}

func listNatives(ctx context.Context, c client.Reader) (native.Existing, error) {
	var plcs flowcontrolv1.PriorityLevelConfigurationList
	if err := c.List(ctx, &plcs); err != nil {
		return native.Existing{}, err
	}
	var fss flowcontrolv1.FlowSchemaList
	if err := c.List(ctx, &fss); err != nil {
		return native.Existing{}, err
	}
	return native.Existing{PriorityLevels: plcs.Items, FlowSchemas: fss.Items}, nil
}

// stateKey hashes what the snapshot depends on, whatever order the cache lists objects in.
// Names and creation times are immutable, so the uid stands for them; our objects' status and
// metadata other than generation do not matter.
func stateKey(rps *flowv1.RequestPriorityList, fss *flowv1.FlowSchemaList, natives *native.Existing) uint64 {
	var sum uint64
	for i := range rps.Items {
		sum += itemKey("rp", string(rps.Items[i].UID), strconv.FormatInt(rps.Items[i].Generation, 10))
	}
	for i := range fss.Items {
		sum += itemKey("fs", string(fss.Items[i].UID), strconv.FormatInt(fss.Items[i].Generation, 10))
	}
	for i := range natives.PriorityLevels {
		sum += itemKey("plc", string(natives.PriorityLevels[i].UID), natives.PriorityLevels[i].ResourceVersion)
	}
	for i := range natives.FlowSchemas {
		sum += itemKey("nfs", string(natives.FlowSchemas[i].UID), natives.FlowSchemas[i].ResourceVersion)
	}
	return sum
}

func itemKey(kind, uid, version string) uint64 {
	h := fnv.New64a()
	for _, v := range []string{kind, uid, version} {
		_, _ = h.Write([]byte(v))
		_, _ = h.Write([]byte{0})
	}
	return h.Sum64()
}

// rpResult is the projection result of a RequestPriority; false when the plan has none.
func (s *snapshot) rpResult(name string) (native.Result, bool) {
	if s.plan == nil {
		return native.Result{}, false
	}
	r, ok := s.plan.RequestPriorities[name]
	return r, ok
}

// fsResult is the projection result of a FlowSchema; false when the plan has none.
func (s *snapshot) fsResult(name string) (native.Result, bool) {
	if s.plan == nil {
		return native.Result{}, false
	}
	r, ok := s.plan.FlowSchemaResults[name]
	return r, ok
}
