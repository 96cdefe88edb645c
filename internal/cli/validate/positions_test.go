package validate

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apf-operator/apf-operator/internal/manifest"
)

// wantMarker starts the comment that marks, on a line of a corpus file, the findings expected
// at that line: `# want: FIELD[, FIELD]...`, where FIELD is a finding's field path, `(object)`
// for a finding about the whole object (at its first key) and `(yaml)` for a syntax error.
const wantMarker = "# want: "

// markerToken is what a finding's `# want:` marker says.
func markerToken(f manifest.Finding) string {
	switch {
	case f.Field != "":
		return f.Field
	case strings.HasPrefix(f.Message, "not valid YAML"):
		return "(yaml)"
	}
	return "(object)"
}

// markers returns the tokens of the `# want:` comment of a line.
func markers(line string) []string {
	_, list, ok := strings.Cut(line, wantMarker)
	if !ok {
		return nil
	}
	var tokens []string
	for _, tok := range strings.Split(list, ",") {
		tokens = append(tokens, strings.TrimSpace(tok))
	}
	return tokens
}

// checkPositions checks the findings about file against its `# want:` markers: each finding
// must sit on a line whose marker names it, at the column where its key (for a field whose
// last step is a name), or the line's first key (for an object), is written; and each marker
// must be reached by a finding. It returns the problems.
func checkPositions(t *testing.T, file string, findings []manifest.Finding) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	var problems []string
	reached := map[string]bool{}
	for _, f := range findings {
		tok := markerToken(f)
		if f.File != file || f.Line < 1 || f.Line > len(lines) {
			problems = append(problems, fmt.Sprintf("%s: finding %q at %s:%d, outside the file", file, tok, f.File, f.Line))
			continue
		}
		line := lines[f.Line-1]
		if !slices.Contains(markers(line), tok) {
			problems = append(problems, fmt.Sprintf("%s:%d:%d: finding %q on a line not marked `%s%s`: %q",
				file, f.Line, f.Column, tok, wantMarker, tok, line))
			continue
		}
		reached[fmt.Sprintf("%d %s", f.Line, tok)] = true
		if keys, ok := keysOf(tok); ok && !atItem(tok, line, f.Column) && !slices.ContainsFunc(keys, func(k string) bool {
			return strings.HasPrefix(columnText(line, f.Column), k+":")
		}) {
			problems = append(problems, fmt.Sprintf("%s:%d:%d: finding %q: column %d is not where a key of its path is written in %q",
				file, f.Line, f.Column, tok, f.Column, line))
		}
	}
	for i, line := range lines {
		for _, tok := range markers(line) {
			if !reached[fmt.Sprintf("%d %s", i+1, tok)] {
				problems = append(problems, fmt.Sprintf("%s:%d: marker %q reached by no finding", file, i+1, tok))
			}
		}
	}
	return problems
}

// keysOf returns the keys one of which a finding's column must point at: the names in its
// field path (the deepest one written in the document; a missing field points at its parent).
// A path ending in an index points at the item, whose text the marker does not say; syntax
// errors and findings about objects have no key to check.
func keysOf(tok string) ([]string, bool) {
	if strings.HasPrefix(tok, "(") || strings.HasSuffix(tok, "]") {
		return nil, false
	}
	return manifest.PathSteps(tok), true
}

// atItem reports whether column points at a list item ("- " before it) and the path has an
// index: a field missing in an item points at the item.
func atItem(tok, line string, column int) bool {
	if !strings.Contains(tok, "[") || column < 2 || column > len(line) {
		return false
	}
	return strings.HasSuffix(strings.TrimRight(line[:column-1], " "), "-")
}

// columnText returns line from the 1-based column on ("" past its end).
func columnText(line string, column int) string {
	if column < 1 || column > len(line) {
		return ""
	}
	return line[column-1:]
}

// corpusFiles returns the files of both corpora with the arguments to check them with.
func corpusFiles(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for dir, args := range map[string][]string{"invalid": nil, "native-invalid": {"--target", "native"}} {
		files, err := filepath.Glob(filepath.Join(corpus, dir, "*.yaml"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: %d files, %v", dir, len(files), err)
		}
		for _, f := range files {
			out[f] = args
		}
	}
	return out
}

// TestPositionMutations proves that the corpus check fails when a position is wrong: with
// every computed line shifted by one (either way), or every column by one, each corpus file
// with a finding is reported by checkPositions.
func TestPositionMutations(t *testing.T) {
	mutations := map[string]func(*manifest.Finding){
		"line+1":   func(f *manifest.Finding) { f.Line++ },
		"line-1":   func(f *manifest.Finding) { f.Line-- },
		"column+1": func(f *manifest.Finding) { f.Column++ },
	}
	for name, mutate := range mutations {
		t.Run(name, func(t *testing.T) {
			caught := 0
			files := corpusFiles(t)
			for file, args := range files {
				_, findings, _ := runJSON(t, append(args, "-f", file)...)
				for i := range findings {
					if findings[i].Line > 0 {
						mutate(&findings[i])
					}
				}
				if name == "column+1" && !slices.ContainsFunc(findings, func(f manifest.Finding) bool { _, ok := keysOf(markerToken(f)); return ok }) {
					caught++ // no finding whose column the markers pin (syntax errors, list items)
					continue
				}
				if len(checkPositions(t, file, findings)) > 0 {
					caught++
				} else {
					t.Errorf("%s: positions mutated by %s, yet the corpus check passes", file, name)
				}
			}
			if caught != len(files) {
				t.Errorf("%d of %d files caught", caught, len(files))
			}
		})
	}
}
