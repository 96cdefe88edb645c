package manifest

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Severities of findings.
const (
	// SeverityError fails validation.
	SeverityError = "error"
	// SeverityWarning is reported and fails only with --strict.
	SeverityWarning = "warning"
)

// Finding is one error or warning about a document.
type Finding struct {
	File string `json:"file"`
	// Document counts the documents of the file from 0.
	Document int `json:"document"`
	// Line and Column (1-based) are where the field is written in the file: its key; for a
	// field not written in the document, its nearest written parent; for a finding about the
	// whole document, the object's first key. Zero when the file could not be read.
	Line     int    `json:"line,omitempty"`
	Column   int    `json:"column,omitempty"`
	Kind     string `json:"kind,omitempty"`
	Name     string `json:"name,omitempty"`
	Severity string `json:"severity"`
	// Field is the field path, empty when the finding is about the whole document.
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

// String renders the finding as a text line: FILE:LINE:COLUMN: [warning: ]FIELD: MESSAGE.
func (f Finding) String() string {
	var b strings.Builder
	b.WriteString(f.File)
	if f.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", f.Line, f.Column)
	}
	b.WriteString(": ")
	if f.Severity == SeverityWarning {
		b.WriteString("warning: ")
	}
	if f.Field != "" {
		b.WriteString(f.Field + ": ")
	}
	b.WriteString(f.Message)
	return b.String()
}

// At sets the finding's position.
func (f *Finding) At(p Position) { f.Line, f.Column = p.Line, p.Column }

// DocFinding is an error about a document or one of its fields. The message is kept on one
// line so that every finding is one line of text output.
func DocFinding(doc Document, kind, name, path, msg string) Finding {
	f := Finding{File: doc.File, Document: doc.Index, Kind: kind, Name: name,
		Severity: SeverityError, Field: path, Message: oneLine(msg)}
	f.At(doc.FieldPosition(path))
	return f
}

// oneLine joins the lines of a multi-line message.
func oneLine(msg string) string {
	lines := strings.Split(strings.TrimSpace(msg), "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return strings.Join(lines, " ")
}

// FileFinding is an error about a path that could not be read.
func FileFinding(path string, err error) Finding {
	return Finding{File: path, Severity: SeverityError, Message: "cannot read: " + err.Error()}
}

// FieldFindings turns validation results about obj into findings.
func FieldFindings(obj Object, errs field.ErrorList, warnings []string) []Finding {
	kind, name := obj.KindName()
	var out []Finding
	for _, e := range errs {
		path := e.Field
		if path == "<nil>" { // a field.Error about the whole object
			path = ""
		}
		out = append(out, DocFinding(obj.Doc, kind, name, path, e.ErrorBody()))
	}
	for _, w := range warnings {
		f := DocFinding(obj.Doc, kind, name, "", w)
		f.Severity = SeverityWarning
		// Warnings read "FIELD: MESSAGE" when they concern one field.
		if path, msg, ok := strings.Cut(w, ": "); ok && !strings.Contains(path, " ") {
			f.Field, f.Message = path, msg
			f.At(obj.Doc.FieldPosition(path))
		}
		out = append(out, f)
	}
	return out
}

// SortFindings orders findings by file, line and column, keeping the order of findings at
// one place (and of those without a position, such as unreadable paths, which come first).
func SortFindings(findings []Finding) {
	slices.SortStableFunc(findings, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
}

// Count returns the number of errors and warnings.
func Count(findings []Finding) (errs, warnings int) {
	for _, f := range findings {
		if f.Severity == SeverityError {
			errs++
		} else {
			warnings++
		}
	}
	return errs, warnings
}
