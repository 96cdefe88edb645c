package manifest

import (
	"regexp"
	"strconv"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
)

// Position is where a finding points in its file: 1-based line and column, or zero when
// unknown (a file that could not be read).
type Position struct {
	// Line and Column are 1-based.
	Line, Column int
}

// FieldPosition returns where the field at path (a field.Path string such as
// `spec.match[0].and[1].superSet.field`, relative to the document's object) is written: the
// key of the deepest part of the path present in the document (a missing required field
// points at its parent), or the object's first key when path is empty or names nothing in the
// document, or the document's first line when it cannot be parsed.
func (d Document) FieldPosition(path string) Position {
	return d.locate(d.Root + path)
}

// locate finds path in the document's YAML node tree.
func (d Document) locate(path string) Position {
	start := Position{Line: d.Line, Column: 1}
	if d.Line == 0 {
		return Position{}
	}
	var root yamlv3.Node
	if err := yamlv3.Unmarshal(d.Data, &root); err != nil || len(root.Content) == 0 {
		return start
	}
	node := root.Content[0]
	pos := d.inFile(node)
	if node.Kind == yamlv3.MappingNode && len(node.Content) > 0 {
		pos = d.inFile(node.Content[0]) // the object's first key, past leading comments
	}
	for _, step := range PathSteps(path) {
		key, child := lookup(node, step)
		if child == nil {
			break
		}
		pos, node = d.inFile(key), child
	}
	return pos
}

// inFile turns a node's position within the document into the file's.
func (d Document) inFile(n *yamlv3.Node) Position {
	return Position{Line: d.Line + n.Line - 1, Column: n.Column}
}

// yamlErrorLine matches the document-relative line that YAML parsers put in their errors.
var yamlErrorLine = regexp.MustCompile(`^(?:yaml: )?(?:unmarshal errors:\s*)?line (\d+): `)

// syntaxPosition returns where a YAML error of the document is, in the file, and the error
// without the document-relative line: the line the parser names (the first one when it names
// several) at its first non-blank column, or the document's start when it names none.
func (d Document) syntaxPosition(msg string) (Position, string) {
	pos := Position{Line: d.Line, Column: 1}
	m := yamlErrorLine.FindStringSubmatchIndex(msg)
	if m == nil {
		return pos, msg
	}
	n, _ := strconv.Atoi(msg[m[2]:m[3]])
	pos.Line = d.Line + n - 1
	lines := strings.Split(string(d.Data), "\n")
	if n >= 1 && n <= len(lines) {
		pos.Column = len(lines[n-1]) - len(strings.TrimLeft(lines[n-1], " \t")) + 1
	}
	return pos, msg[m[1]:]
}

// lookup finds step in node: a key of a mapping (returning the key node, whose line is where
// the field is written, and its value), or an index of a sequence (the item twice).
func lookup(node *yamlv3.Node, step string) (*yamlv3.Node, *yamlv3.Node) {
	for node.Kind == yamlv3.AliasNode && node.Alias != nil {
		node = node.Alias
	}
	switch node.Kind {
	case yamlv3.MappingNode:
		for i := 0; i+1 < len(node.Content); i += 2 {
			if node.Content[i].Value == step {
				return node.Content[i], node.Content[i+1]
			}
		}
	case yamlv3.SequenceNode:
		if i, err := strconv.Atoi(step); err == nil && i >= 0 && i < len(node.Content) {
			return node.Content[i], node.Content[i]
		}
	}
	return nil, nil
}

// PathSteps splits a field.Path string into its field names, indices and keys:
// `spec.match[0].and` gives spec, match, 0, and; `metadata.labels[a.b]` gives metadata,
// labels, a.b.
func PathSteps(path string) []string {
	var steps []string
	for path != "" {
		switch path[0] {
		case '.':
			path = path[1:]
		case '[':
			end := strings.IndexByte(path, ']')
			if end < 0 {
				return append(steps, path[1:])
			}
			steps, path = append(steps, path[1:end]), path[end+1:]
		default:
			end := strings.IndexAny(path, ".[")
			if end < 0 {
				end = len(path)
			}
			steps, path = append(steps, path[:end]), path[end:]
		}
	}
	return steps
}
