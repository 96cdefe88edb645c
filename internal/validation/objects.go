package validation

import (
	"context"
	"sort"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

// Objects is a read-only view of the other objects that cross-object rules consult: the
// cluster's objects (the webhooks implement it over the manager's cache and its field indexes,
// so no check lists every object) or a set of manifests (the offline validator uses Set).
// Implementations may return the object under validation itself; callers skip it by name.
// Returned objects must not be modified.
type Objects interface {
	// RequestPriority returns the RequestPriority with the given name, or nil when there is none.
	RequestPriority(ctx context.Context, name string) (*v1alpha1.RequestPriority, error)
	// RequestPrioritiesAtLevel returns the RequestPriority objects whose spec.priorityLevel is
	// level.
	RequestPrioritiesAtLevel(ctx context.Context, level int32) ([]*v1alpha1.RequestPriority, error)
	// FlowSchemasReferringTo returns the FlowSchema objects whose spec.requestPriority.name is
	// name.
	FlowSchemasReferringTo(ctx context.Context, name string) ([]*v1alpha1.FlowSchema, error)
}

// Set is an in-memory Objects over a fixed list of objects, indexed like the cache. When two
// objects of one kind share a name, the first one wins for RequestPriority lookups; the
// duplicate itself is the caller's to report.
type Set struct {
	byName      map[string]*v1alpha1.RequestPriority
	byLevel     map[int32][]*v1alpha1.RequestPriority
	byReference map[string][]*v1alpha1.FlowSchema
}

var _ Objects = (*Set)(nil)

// NewSet indexes the given objects. It keeps pointers to them; they must not change afterwards.
func NewSet(rps []*v1alpha1.RequestPriority, fss []*v1alpha1.FlowSchema) *Set {
	s := &Set{
		byName:      make(map[string]*v1alpha1.RequestPriority, len(rps)),
		byLevel:     make(map[int32][]*v1alpha1.RequestPriority, len(rps)),
		byReference: make(map[string][]*v1alpha1.FlowSchema, len(fss)),
	}
	for _, rp := range rps {
		if _, dup := s.byName[rp.Name]; !dup {
			s.byName[rp.Name] = rp
		}
		s.byLevel[rp.Spec.PriorityLevel] = append(s.byLevel[rp.Spec.PriorityLevel], rp)
	}
	for _, fs := range fss {
		ref := fs.Spec.RequestPriority.Name
		s.byReference[ref] = append(s.byReference[ref], fs)
	}
	return s
}

// RequestPriority implements Objects.
func (s *Set) RequestPriority(_ context.Context, name string) (*v1alpha1.RequestPriority, error) {
	return s.byName[name], nil
}

// RequestPrioritiesAtLevel implements Objects.
func (s *Set) RequestPrioritiesAtLevel(_ context.Context, level int32) ([]*v1alpha1.RequestPriority, error) {
	return s.byLevel[level], nil
}

// FlowSchemasReferringTo implements Objects.
func (s *Set) FlowSchemasReferringTo(_ context.Context, name string) ([]*v1alpha1.FlowSchema, error) {
	return s.byReference[name], nil
}

// otherNames returns the sorted names of the RequestPriority objects other than self.
func otherNames(rps []*v1alpha1.RequestPriority, self string) []string {
	var names []string
	for _, rp := range rps {
		if rp.Name != self {
			names = append(names, rp.Name)
		}
	}
	sort.Strings(names)
	return names
}
