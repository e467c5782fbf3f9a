package manifest

import (
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// lineIndex finds the lines of fields in one document.
type lineIndex struct {
	text   []byte
	offset int // lines of the file before the document
	root   *yaml.Node
	parsed bool
}

// line returns the file line of the field at path (such as "spec.containers[0].resources"),
// or of its deepest ancestor found, or of the object itself; 0 when the document cannot be
// parsed.
func (x *lineIndex) line(path string) int {
	if !x.parsed {
		x.parsed = true
		var doc yaml.Node
		if err := yaml.Unmarshal(x.text, &doc); err == nil && len(doc.Content) == 1 {
			x.root = doc.Content[0]
		}
	}
	if x.root == nil {
		return 0
	}
	if line, matched := find(x.root, splitPath(path)); matched > 0 {
		return x.offset + line
	}
	return x.offset + x.root.Line
}

// find follows segs below node and returns how many it matched and the line of the last one
// matched: the line of a mapping key, or of a sequence item. A name met in a sequence (type
// errors give paths without indexes) is looked for in each item, and the item that matches
// most of the path wins.
func find(node *yaml.Node, segs []string) (line, matched int) {
	for node.Kind == yaml.AliasNode && node.Alias != nil {
		node = node.Alias
	}
	if len(segs) == 0 {
		return 0, 0
	}
	switch node.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(node.Content); i += 2 {
			if node.Content[i].Value == segs[0] {
				return below(node.Content[i].Line, node.Content[i+1], segs[1:])
			}
		}
	case yaml.SequenceNode:
		if i, err := strconv.Atoi(segs[0]); err == nil {
			if i >= 0 && i < len(node.Content) {
				return below(node.Content[i].Line, node.Content[i], segs[1:])
			}
			return 0, 0
		}
		for _, item := range node.Content {
			if l, m := find(item, segs); m > matched {
				line, matched = l, m
			}
		}
	}
	return line, matched
}

// below continues a match at line into node.
func below(line int, node *yaml.Node, rest []string) (int, int) {
	if l, m := find(node, rest); m > 0 {
		return l, m + 1
	}
	return line, 1
}

// splitPath splits a field path into names, indexes and keys: "a.b[0].c[x.y/z]" gives
// a, b, 0, c, x.y/z.
func splitPath(path string) []string {
	var segs []string
	for path != "" {
		switch path[0] {
		case '.':
			path = path[1:]
		case '[':
			end := strings.IndexByte(path, ']')
			if end < 0 {
				return append(segs, path[1:])
			}
			segs = append(segs, path[1:end])
			path = path[end+1:]
		default:
			end := strings.IndexAny(path, ".[")
			if end < 0 {
				end = len(path)
			}
			segs = append(segs, path[:end])
			path = path[end:]
		}
	}
	return segs
}
