package presets_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apf-operator/apf-operator/test/envtestutil"
)

// observation is where one preset request landed in one phase of TestPresetsLive.
type observation struct {
	phase   string
	landing landing
	got     where
}

// Markers of the table in docs/presets.md that TestPresetsLive writes (PRESETS_UPDATE_DOCS=1)
// or checks.
const (
	tableBegin = "<!-- landing-table:begin (written by test/presets TestPresetsLive) -->"
	tableEnd   = "<!-- landing-table:end -->"
)

func docTable(observed []observation) string {
	var b strings.Builder
	b.WriteString("| values | preset | identity | request | native FlowSchema | native level |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- |\n")
	for _, o := range observed {
		fmt.Fprintf(&b, "| %s | %s | `%s` | `%s %s` | %s | %s |\n", o.phase, o.landing.preset, o.landing.user,
			o.landing.method, o.landing.path, o.got.flowSchema, o.got.level)
	}
	return b.String()
}

// checkDocTable compares the table in docs/presets.md with what the test observed, or rewrites
// it when PRESETS_UPDATE_DOCS=1.
func checkDocTable(t *testing.T, observed []observation) {
	t.Helper()
	path := filepath.Join(envtestutil.RepoRoot(), "docs", "presets.md")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	begin, end := strings.Index(doc, tableBegin), strings.Index(doc, tableEnd)
	if begin < 0 || end < begin {
		t.Fatalf("%s lacks the markers %q and %q", path, tableBegin, tableEnd)
	}
	want := docTable(observed)
	current := doc[begin+len(tableBegin)+1 : end]
	if current == want {
		return
	}
	if os.Getenv("PRESETS_UPDATE_DOCS") == "1" && !t.Failed() { // never record a failed run
		doc = doc[:begin+len(tableBegin)+1] + want + doc[end:]
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("the landing table of docs/presets.md differs from this run's (PRESETS_UPDATE_DOCS=1 rewrites it):\n%s", want)
}
