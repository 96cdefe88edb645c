package validate

import (
	"context"
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
	docs, findings := collect(paths, nil, stdin)
	var rps []v1alpha1.RequestPriority
	var fss []v1alpha1.FlowSchema
	for _, d := range docs {
		objs, f := decode(d)
		findings = append(findings, f...)
		for _, o := range objs {
			findings = append(findings, typeFindings(o)...)
			if o.rp != nil {
				rps = append(rps, *o.rp)
			} else if o.apf() {
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

// typeFindings reports the values of the wrong type in o, as the CRD schema words them (the
// typed object holds them unset).
func typeFindings(o object) []finding {
	if o.decodeErr == nil {
		return nil
	}
	errs, err := schemaErrors(context.Background(), o)
	if err != nil {
		return []finding{docFinding(o.doc, "", "", "", err.Error())}
	}
	var typeErrs field.ErrorList
	for _, e := range errs {
		if isTypeError(e) {
			typeErrs = append(typeErrs, e)
		}
	}
	return fieldFindings(o, typeErrs, nil)
}

// Document is one YAML document of an input, as findings name it: FILE:INDEX, the index
// counting the documents of the file from 0 (standard input is "<stdin>").
type Document struct {
	File  string
	Index int
	Data  []byte
}

// ReadDocuments splits the given paths (files, directories recursively, `-` for stdin) into
// their YAML documents with the validator's own reading, for commands such as import that
// decode other kinds. A path that cannot be read, or a document that is not YAML, is an error
// naming the file.
func ReadDocuments(paths []string, stdin io.Reader) ([]Document, error) {
	docs, findings := collect(paths, nil, stdin)
	out := make([]Document, 0, len(docs))
	for _, d := range docs {
		out = append(out, Document{File: d.file, Index: d.index, Data: d.data})
	}
	var errs []error
	for _, f := range findings {
		errs = append(errs, errors.New(f.String()))
	}
	return out, errors.Join(errs...)
}
