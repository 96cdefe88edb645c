package manifest

import (
	"path"
	"strings"
)

// excluded reports whether a glob of --exclude matches rel, a slash-separated path relative to
// the directory given on the command line (or a file's path as given): the whole path, any
// trailing part of it (so that 'templates/*' excludes charts/app/templates/x.yaml under -f
// charts/) or its base name, as .gitignore patterns without a slash match at any depth.
func excluded(rel string, globs []string) bool {
	for _, g := range globs {
		g = strings.TrimSuffix(strings.TrimPrefix(g, "./"), "/")
		for tail := rel; ; {
			if ok, _ := path.Match(g, tail); ok {
				return true
			}
			i := strings.IndexByte(tail, '/')
			if i < 0 {
				break
			}
			tail = tail[i+1:]
		}
	}
	return false
}

// CheckGlob rejects a malformed --exclude pattern (path.Match would fail on every path).
func CheckGlob(g string) error {
	_, err := path.Match(g, "")
	return err
}
