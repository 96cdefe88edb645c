package validate

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzRun feeds arbitrary bytes as a manifest stream on standard input: Run must not panic and
// must exit 0 or 1 (never a usage error, since the command line is valid).
func FuzzRun(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(corpus, "*", "*.yaml"))
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("apiVersion: v1\nkind: List\nitems: [{apiVersion: v1, kind: List, items: [null, 3]}]\n"))
	f.Add([]byte("---\n---\n- a\n---\n\"str\"\n---\napiVersion: 7\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var out, errOut bytes.Buffer
		code := Run([]string{"-o", "json", "-f", "-"}, bytes.NewReader(data), &out, &errOut)
		if code != ExitOK && code != ExitError {
			t.Fatalf("exit code %d for a valid command line: %s", code, errOut.String())
		}
	})
}
