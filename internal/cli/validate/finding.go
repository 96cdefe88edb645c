package validate

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// Severities of findings.
const (
	severityError   = "error"
	severityWarning = "warning"
)

// finding is one error or warning about a document.
type finding struct {
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
func (f finding) String() string {
	var b strings.Builder
	b.WriteString(f.File)
	if f.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", f.Line, f.Column)
	}
	b.WriteString(": ")
	if f.Severity == severityWarning {
		b.WriteString("warning: ")
	}
	if f.Field != "" {
		b.WriteString(f.Field + ": ")
	}
	b.WriteString(f.Message)
	return b.String()
}

// at sets the finding's position.
func (f *finding) at(p position) { f.Line, f.Column = p.Line, p.Column }

// docFinding is an error about a document or one of its fields. The message is kept on one
// line so that every finding is one line of text output.
func docFinding(doc document, kind, name, path, msg string) finding {
	f := finding{File: doc.file, Document: doc.index, Kind: kind, Name: name,
		Severity: severityError, Field: path, Message: oneLine(msg)}
	f.at(doc.fieldPosition(path))
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

// fileFinding is an error about a path that could not be read.
func fileFinding(path string, err error) finding {
	return finding{File: path, Severity: severityError, Message: "cannot read: " + err.Error()}
}

// fieldFindings turns validation results about obj into findings.
func fieldFindings(obj object, errs field.ErrorList, warnings []string) []finding {
	kind, name := obj.kindName()
	var out []finding
	for _, e := range errs {
		path := e.Field
		if path == "<nil>" { // a field.Error about the whole object
			path = ""
		}
		out = append(out, docFinding(obj.doc, kind, name, path, e.ErrorBody()))
	}
	for _, w := range warnings {
		f := docFinding(obj.doc, kind, name, "", w)
		f.Severity = severityWarning
		// Warnings read "FIELD: MESSAGE" when they concern one field.
		if path, msg, ok := strings.Cut(w, ": "); ok && !strings.Contains(path, " ") {
			f.Field, f.Message = path, msg
			f.at(obj.doc.fieldPosition(path))
		}
		out = append(out, f)
	}
	return out
}

// sortFindings orders findings by file, line and column, keeping the order of findings at
// one place (and of those without a position, such as unreadable paths, which come first).
func sortFindings(findings []finding) {
	slices.SortStableFunc(findings, func(a, b finding) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
}

// report writes the findings as text lines, one JSON or YAML document, or GitHub Actions
// annotations.
func report(findings []finding, output string, w io.Writer) error {
	switch output {
	case outputGitHub:
		return reportGitHub(findings, w)
	case outputJSON, outputYAML:
		return reportDocument(findings, output, w)
	}
	for _, f := range findings {
		if _, err := fmt.Fprintln(w, f.String()); err != nil {
			return err
		}
	}
	return nil
}

// reportDocument writes the findings and their counts as one JSON or YAML document.
func reportDocument(findings []finding, output string, w io.Writer) error {
	errs, warnings := count(findings)
	if findings == nil {
		findings = []finding{}
	}
	doc := struct {
		Findings []finding `json:"findings"`
		Errors   int       `json:"errors"`
		Warnings int       `json:"warnings"`
	}{findings, errs, warnings}
	if output == outputYAML {
		data, err := yaml.Marshal(doc)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(doc)
}

// count returns the number of errors and warnings.
func count(findings []finding) (errs, warnings int) {
	for _, f := range findings {
		if f.Severity == severityError {
			errs++
		} else {
			warnings++
		}
	}
	return errs, warnings
}
