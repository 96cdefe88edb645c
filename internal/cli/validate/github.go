package validate

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/apf-operator/apf-operator/internal/manifest"
)

// Output formats of -o.
const (
	outputText   = "text"
	outputJSON   = "json"
	outputYAML   = "yaml"
	outputGitHub = "github"
)

// validOutputs are the values -o takes.
var validOutputs = map[string]bool{outputText: true, outputJSON: true, outputYAML: true, outputGitHub: true}

// reportGitHub writes one GitHub Actions workflow command per finding
// (`::error file=F,line=L,title=T::MESSAGE`, `::warning ...` for warnings), which the runner
// turns into annotations on the pull request's files. A finding about standard input has no
// file: it is written without file= and line=, and its title says where it is.
func reportGitHub(findings []manifest.Finding, w io.Writer) error {
	for _, f := range findings {
		if _, err := fmt.Fprintln(w, githubCommand(f)); err != nil {
			return err
		}
	}
	return nil
}

// githubCommand renders one finding as a workflow command.
func githubCommand(f manifest.Finding) string {
	var props []string
	title := githubTitle(f)
	if f.File != manifest.StdinName {
		props = append(props, "file="+escapeProperty(f.File))
		if f.Line > 0 {
			props = append(props, "line="+strconv.Itoa(f.Line), "col="+strconv.Itoa(f.Column))
		}
	} else if f.Line > 0 {
		title = fmt.Sprintf("%s (%s line %d column %d)", title, manifest.StdinName, f.Line, f.Column)
	}
	props = append(props, "title="+escapeProperty(title))
	return "::" + f.Severity + " " + strings.Join(props, ",") + "::" + escapeData(f.Message)
}

// githubTitle names what the finding is about: KIND/NAME FIELD, as much of it as is known.
func githubTitle(f manifest.Finding) string {
	var parts []string
	switch {
	case f.Kind != "" && f.Name != "":
		parts = append(parts, f.Kind+"/"+f.Name)
	case f.Kind != "":
		parts = append(parts, f.Kind)
	}
	if f.Field != "" {
		parts = append(parts, f.Field)
	}
	if len(parts) == 0 {
		return "apf-operator validate"
	}
	return strings.Join(parts, " ")
}

// escapeData escapes a workflow command's message as GitHub's toolkit does (@actions/core
// escapeData): %, CR and LF.
var escapeData = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace

// escapeProperty escapes a workflow command's property value as GitHub's toolkit does
// (@actions/core escapeProperty): also ':' and ',', which delimit properties.
var escapeProperty = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace
