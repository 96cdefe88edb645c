package validate

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Severities of findings.
const (
	severityError   = "error"
	severityWarning = "warning"
)

// finding is one error or warning about a document.
type finding struct {
	File     string `json:"file"`
	Document int    `json:"document"`
	// Line is the 1-based line of the file on which the field (or, without a field or when the
	// field is not written in the document, the document) starts; 0 when the file could not
	// be read.
	Line     int    `json:"line,omitempty"`
	Kind     string `json:"kind,omitempty"`
	Name     string `json:"name,omitempty"`
	Severity string `json:"severity"`
	// Field is the field path, empty when the finding is about the whole document.
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

// String renders the finding as a text line: FILE:DOC: [warning: ]FIELD: MESSAGE.
func (f finding) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%d: ", f.File, f.Document)
	if f.Severity == severityWarning {
		b.WriteString("warning: ")
	}
	if f.Field != "" {
		b.WriteString(f.Field + ": ")
	}
	b.WriteString(f.Message)
	return b.String()
}

// docFinding is an error about a document or one of its fields. The message is kept on one
// line so that every finding is one line of text output.
func docFinding(doc document, kind, name, path, msg string) finding {
	return finding{File: doc.file, Document: doc.index, Line: doc.fieldLine(path), Kind: kind, Name: name,
		Severity: severityError, Field: path, Message: oneLine(msg)}
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
		out = append(out, docFinding(obj.doc, kind, name, e.Field, e.ErrorBody()))
	}
	for _, w := range warnings {
		f := docFinding(obj.doc, kind, name, "", w)
		f.Severity = severityWarning
		// Warnings read "FIELD: MESSAGE" when they concern one field.
		if path, msg, ok := strings.Cut(w, ": "); ok && !strings.Contains(path, " ") {
			f.Field, f.Message, f.Line = path, msg, obj.doc.fieldLine(path)
		}
		out = append(out, f)
	}
	return out
}

// sortFindings orders findings by file and document, keeping the order within a document.
func sortFindings(findings []finding) {
	sort.SliceStable(findings, func(i, j int) bool {
		if findings[i].File != findings[j].File {
			return findings[i].File < findings[j].File
		}
		return findings[i].Document < findings[j].Document
	})
}

// report writes the findings as text lines, one JSON document or GitHub Actions annotations.
func report(findings []finding, output string, w io.Writer) error {
	if output == outputGitHub {
		return reportGitHub(findings, w)
	}
	if output == outputJSON {
		errs, warnings := count(findings)
		if findings == nil {
			findings = []finding{}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(struct {
			Findings []finding `json:"findings"`
			Errors   int       `json:"errors"`
			Warnings int       `json:"warnings"`
		}{findings, errs, warnings})
	}
	for _, f := range findings {
		if _, err := fmt.Fprintln(w, f.String()); err != nil {
			return err
		}
	}
	return nil
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
