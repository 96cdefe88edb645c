package harness

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// CodeBlock is a fenced code block of a Markdown file: ``` fences at the start of a line
// (indented code is not a block here).
type CodeBlock struct {
	// Line is the opening fence's line (1-based).
	Line int
	// Lang and Attrs are the fence's info string split by FenceInfo ("sh run=offline").
	Lang  string
	Attrs map[string]string
	// Heading is the text of the last heading above the block.
	Heading string
	Lines   []string
}

// CodeBlocks reads the fenced code blocks of the Markdown file path, the one reader of
// documentation pages for test/docs and test/troubleshooting; a block left open is an error.
func CodeBlocks(path string) ([]CodeBlock, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var blocks []CodeBlock
	var cur *CodeBlock
	heading := ""
	s := bufio.NewScanner(f)
	for n := 1; s.Scan(); n++ {
		line := s.Text()
		switch {
		case cur == nil && strings.HasPrefix(line, "```"):
			lang, attrs := FenceInfo(strings.TrimPrefix(line, "```"))
			cur = &CodeBlock{Line: n, Lang: lang, Attrs: attrs, Heading: heading}
		case cur != nil && strings.TrimSpace(line) == "```":
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.Lines = append(cur.Lines, line)
		case strings.HasPrefix(line, "#"):
			heading = strings.TrimSpace(strings.TrimLeft(line, "#"))
		}
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	if cur != nil {
		return nil, fmt.Errorf("%s: the block opened at line %d is not closed", path, cur.Line)
	}
	return blocks, nil
}
