package validate

import (
	"errors"
	"io"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

// LoadObjects reads the RequestPriority and FlowSchema objects of the given paths (files,
// directories recursively, `-` for stdin) with the validator's own reading and strict decoding,
// for commands such as explain that work on the same manifests. Any document that cannot be
// read or decoded is an error naming its file and document, as validate reports it.
func LoadObjects(paths []string, stdin io.Reader) ([]v1alpha1.RequestPriority, []v1alpha1.FlowSchema, error) {
	docs, findings := collect(paths, stdin)
	var rps []v1alpha1.RequestPriority
	var fss []v1alpha1.FlowSchema
	for _, d := range docs {
		objs, f := decode(d)
		findings = append(findings, f...)
		for _, o := range objs {
			if o.rp != nil {
				rps = append(rps, *o.rp)
			} else {
				fss = append(fss, *o.fs)
			}
		}
	}
	var errs []error
	for _, f := range findings {
		if f.Severity == severityError {
			errs = append(errs, errors.New(f.String()))
		}
	}
	return rps, fss, errors.Join(errs...)
}
