package validate

import (
	"strconv"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
)

// fieldLine returns the line of the file on which the field at path (a field.Path string such
// as `spec.match[0].and[1].superSet.field`, relative to the document's object) is written: the
// line of the deepest part of the path present in the document, or the document's first line
// when the document cannot be parsed or path is empty.
func (d document) fieldLine(path string) int {
	path = d.root + path
	if d.line == 0 || path == "" {
		return d.line
	}
	var root yamlv3.Node
	if err := yamlv3.Unmarshal(d.data, &root); err != nil || len(root.Content) == 0 {
		return d.line
	}
	line := 0
	node := root.Content[0]
	for _, step := range pathSteps(path) {
		key, child := lookup(node, step)
		if child == nil {
			break
		}
		line, node = key.Line, child
	}
	if line == 0 {
		return d.line
	}
	return d.line + line - 1
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

// pathSteps splits a field.Path string into its field names, indices and keys:
// `spec.match[0].and` gives spec, match, 0, and; `metadata.labels[a.b]` gives metadata,
// labels, a.b.
func pathSteps(path string) []string {
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
