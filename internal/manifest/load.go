package manifest

import (
	"errors"
	"io"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

// LoadObjects reads the RequestPriority and FlowSchema objects of the given paths (files,
// directories recursively, `-` for stdin) with the validator's own reading and strict decoding,
// for commands such as explain that work on the same manifests. Any document that cannot be
// read or decoded (a syntax error, an unknown field, a value of the wrong type) is an error
// naming its file, line and column, as validate reports it.
func LoadObjects(paths []string, stdin io.Reader) ([]v1alpha1.RequestPriority, []v1alpha1.FlowSchema, error) {
	docs, findings := Read(paths, nil, stdin)
	var rps []v1alpha1.RequestPriority
	var fss []v1alpha1.FlowSchema
	for _, d := range docs {
		objs, f := Decode(d)
		findings = append(findings, f...)
		for _, o := range objs {
			findings = append(findings, typeFindings(o)...)
			if o.RP != nil {
				rps = append(rps, *o.RP)
			} else if o.APF() {
				fss = append(fss, *o.FS)
			}
		}
	}
	var errs []error
	for _, f := range findings {
		if f.Severity == SeverityError {
			errs = append(errs, errors.New(f.String()))
		}
	}
	return rps, fss, errors.Join(errs...)
}

// typeFindings reports the first value of the wrong type in o (the typed object holds it
// unset) on its field. validate reports every such value, in the CRD schema's words; the
// loaders stop at the first, and so need no CRD schema (nor its CEL environment, which would
// pull command-line packages into pkg/apf).
func typeFindings(o Object) []Finding {
	if o.DecodeErr == nil {
		return nil
	}
	return FieldFindings(o, field.ErrorList{DecodeError(o.DecodeErr)}, nil)
}

// ReadDocuments splits the given paths (files, directories recursively, `-` for stdin) into
// their YAML documents with the validator's own reading, for commands such as import that
// decode other kinds. A path that cannot be read, or a document that is not YAML, is an error
// naming the file.
func ReadDocuments(paths []string, stdin io.Reader) ([]Document, error) {
	docs, findings := Read(paths, nil, stdin)
	var errs []error
	for _, f := range findings {
		errs = append(errs, errors.New(f.String()))
	}
	return docs, errors.Join(errs...)
}
