package manifest

import (
	"errors"
	"io"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

// LocatedRequestPriority is a RequestPriority read from a manifest with where it is written.
type LocatedRequestPriority struct {
	v1alpha1.RequestPriority
	// File is the file it was read from ("<stdin>" for standard input).
	File string
	// Line is the 1-based line of its spec.assuredConcurrencyShares (of the nearest enclosing
	// key written when that is absent), 0 when unknown.
	Line int
}

// LoadRequestPriorities reads the RequestPriority objects of the given paths as LoadObjects
// does (same reading, same strict decoding, same errors), each with its file and line, for
// commands such as recommend that point at the line to edit.
func LoadRequestPriorities(paths []string, stdin io.Reader) ([]LocatedRequestPriority, error) {
	docs, findings := Read(paths, nil, stdin)
	var out []LocatedRequestPriority
	for _, d := range docs {
		objs, f := Decode(d)
		findings = append(findings, f...)
		for _, o := range objs {
			findings = append(findings, typeFindings(o)...)
			if o.RP != nil {
				pos := o.Doc.FieldPosition("spec.assuredConcurrencyShares")
				out = append(out, LocatedRequestPriority{RequestPriority: *o.RP, File: o.Doc.File, Line: pos.Line})
			}
		}
	}
	var errs []error
	for _, f := range findings {
		if f.Severity == SeverityError {
			errs = append(errs, errors.New(f.String()))
		}
	}
	return out, errors.Join(errs...)
}
