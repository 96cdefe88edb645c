package docexamples

import (
	"bufio"
	"regexp"
	"strings"
)

// Document is one YAML document of the operator's API group found in a Markdown page.
type Document struct {
	// Line is where the document starts in the page (1-based).
	Line int
	Text string
	// Kind is the document's kind: RequestPriority, FlowSchema or EventRateLimit.
	Kind string
}

var (
	fence       = regexp.MustCompile("^\\s*(```+|~~~+)\\s*([^\\s]*)")
	heredoc     = regexp.MustCompile(`<<-?\s*'?"?([A-Za-z_]+)'?"?`)
	kindLine    = regexp.MustCompile(`(?m)^kind:\s*(\S+)`)
	apiVersion  = regexp.MustCompile(`(?m)^apiVersion:\s*flowcontrol\.apf-operator\.io/`)
	levelLine   = regexp.MustCompile(`(?m)^\s+(priorityLevel|nativeLevel):|\{.*\b(priorityLevel|nativeLevel):`)
	documentSep = regexp.MustCompile(`^---\s*$`)
)

// Extract returns the operator's documents in a page's fenced blocks: a YAML block's documents,
// and the bodies of here-documents in shell blocks (kubectl apply -f - <<EOF).
func Extract(page string) []Document {
	var docs []Document
	var block []string
	var start int
	var info, closing string
	sc := bufio.NewScanner(strings.NewReader(page))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if closing == "" {
			if m := fence.FindStringSubmatch(line); m != nil {
				closing, info, block, start = m[1], m[2], nil, n+1
			}
			continue
		}
		if strings.TrimSpace(line) == closing {
			docs = append(docs, blockDocuments(info, block, start)...)
			closing = ""
			continue
		}
		block = append(block, line)
	}
	return docs
}

// blockDocuments splits one fenced block, whose first line is page line start.
func blockDocuments(info string, lines []string, start int) []Document {
	switch {
	case info == "" || strings.HasPrefix(info, "yaml") || strings.HasPrefix(info, "yml"):
		return split(lines, start)
	case strings.HasPrefix(info, "sh") || strings.HasPrefix(info, "bash") || strings.HasPrefix(info, "console"):
		var docs []Document
		for i := 0; i < len(lines); i++ {
			m := heredoc.FindStringSubmatch(lines[i])
			if m == nil {
				continue
			}
			end := i + 1
			for end < len(lines) && strings.TrimSpace(lines[end]) != m[1] {
				end++
			}
			docs = append(docs, split(lines[i+1:end], start+i+1)...)
			i = end
		}
		return docs
	}
	return nil
}

// split cuts lines into YAML documents at "---" and keeps the operator's.
func split(lines []string, start int) []Document {
	var docs []Document
	from := 0
	flush := func(to int) {
		text := strings.Join(lines[from:to], "\n") + "\n"
		if m := kindLine.FindStringSubmatch(text); m != nil && apiVersion.MatchString(text) {
			docs = append(docs, Document{Line: start + from, Text: text, Kind: m[1]})
		}
	}
	for i, l := range lines {
		if documentSep.MatchString(l) {
			flush(i)
			from = i + 1
		}
	}
	flush(len(lines))
	return docs
}

// Patch reports whether a RequestPriority document is a patch (recommend's output: a few
// fields to merge), not an object to apply: it names neither a priorityLevel nor a nativeLevel.
func (d Document) Patch() bool {
	return d.Kind == "RequestPriority" && !levelLine.MatchString(d.Text)
}
