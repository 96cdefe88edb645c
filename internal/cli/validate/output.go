package validate

import (
	"encoding/json"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"

	"github.com/apf-operator/apf-operator/internal/manifest"
)

// report writes the findings as text lines, one JSON or YAML document, or GitHub Actions
// annotations.
func report(findings []manifest.Finding, output string, w io.Writer) error {
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
func reportDocument(findings []manifest.Finding, output string, w io.Writer) error {
	errs, warnings := manifest.Count(findings)
	if findings == nil {
		findings = []manifest.Finding{}
	}
	doc := struct {
		Findings []manifest.Finding `json:"findings"`
		Errors   int                `json:"errors"`
		Warnings int                `json:"warnings"`
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
