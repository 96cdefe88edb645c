package apf

import (
	"errors"
	"fmt"
	"os"
	"sort"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/manifest"
)

// StaticSource is a fixed configuration, typically read from manifests with LoadManifests.
type StaticSource struct {
	// RequestPriorities are the RequestPriority objects.
	RequestPriorities []v1alpha1.RequestPriority
	// FlowSchemas are the FlowSchema objects.
	FlowSchemas []v1alpha1.FlowSchema
}

// LoadManifests reads the RequestPriority and FlowSchema objects of YAML or JSON manifests:
// files, directories (recursively) or "-" for standard input; a document may hold one object
// or a List. Documents of other kinds are skipped; a document that is not valid YAML, or an
// object with unknown fields, is an error naming its file and document; so is an object that
// would not be in effect (see Check).
func LoadManifests(paths ...string) (*StaticSource, error) {
	if len(paths) == 0 {
		return nil, errors.New("apf.LoadManifests: no paths: name the manifest files or directories")
	}
	rps, fss, err := manifest.LoadObjects(paths, os.Stdin)
	if err != nil {
		return nil, err
	}
	s := &StaticSource{RequestPriorities: rps, FlowSchemas: fss}
	if err := s.Check(); err != nil {
		return nil, err
	}
	return s, nil
}

// Check reports every object the Filter would leave out (an invalid spec, a duplicate
// priority level, a reference to a missing RequestPriority), with the reason and the fix, as
// the operator reports them in the objects' Ready condition. No API server defaults or
// validates manifests read from files, so every required field must be set.
func (s *StaticSource) Check() error {
	cfg := effective.Compute(s.RequestPriorities, s.FlowSchemas)
	errs := notInEffect("RequestPriority", cfg.RequestPriorityStatus)
	errs = append(errs, notInEffect("FlowSchema", cfg.FlowSchemaStatus)...)
	return errors.Join(errs...)
}

// notInEffect returns an error for each object of statuses that is not in effect, by name.
func notInEffect(kind string, statuses map[string]effective.Status) []error {
	names := make([]string, 0, len(statuses))
	for name, st := range statuses {
		if !st.InEffect {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	errs := make([]error, 0, len(names))
	for _, name := range names {
		st := statuses[name]
		errs = append(errs, fmt.Errorf("%s %q is not in effect (%s): %s", kind, name, st.Reason, st.Message))
	}
	return errs
}

// Apply makes f enforce the source's configuration.
func (s *StaticSource) Apply(f *Filter) { f.Update(s.RequestPriorities, s.FlowSchemas) }
