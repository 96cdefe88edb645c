package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

const pkg = "example.com/p"

// run feeds lines of `go test -json` to a report and returns its verdict and output.
func run(t *testing.T, allowed allowlist, lines ...string) (bool, string) {
	t.Helper()
	var out bytes.Buffer
	r := newReport(&out, allowed)
	if err := r.consume(strings.NewReader(strings.Join(lines, "\n"))); err != nil {
		t.Fatal(err)
	}
	ok := r.finish()
	return ok, out.String()
}

func ev(action, test, output string) string {
	return `{"Action":"` + action + `","Package":"` + pkg + `","Test":"` + test + `","Output":` + quote(output) + `,"Elapsed":1.5}`
}

func quote(s string) string {
	return `"` + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "\n", `\n`) + `"`
}

func wantContains(t *testing.T, out string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
}

func TestAllPass(t *testing.T) {
	ok, out := run(t, nil, ev("run", "TestA", ""), ev("output", "TestA", "=== RUN TestA\n"), ev("pass", "TestA", ""),
		ev("run", "TestB", ""), ev("pass", "TestB", ""), ev("pass", "", ""))
	if !ok {
		t.Errorf("a run where every test passed failed:\n%s", out)
	}
	wantContains(t, out, "ok   "+pkg+" 1.5s", "2 passed, 0 failed, 0 skipped")
	if strings.Contains(out, "=== RUN") {
		t.Errorf("a passing test's output was printed:\n%s", out)
	}
}

func TestFailedTestShowsItsOutput(t *testing.T) {
	ok, out := run(t, nil, ev("output", "TestA", "    a_test.go:9: got 1, want 2\n"), ev("fail", "TestA", ""),
		ev("pass", "TestB", ""), ev("fail", "", ""))
	if ok {
		t.Errorf("a run with a failed test passed:\n%s", out)
	}
	wantContains(t, out, "--- FAIL "+pkg+" TestA", "got 1, want 2", "FAIL "+pkg+" 1.5s", "1 passed, 1 failed, 0 skipped")
}

func TestSkipOutsideAllowlistFails(t *testing.T) {
	lines := []string{ev("output", "TestA/sub", "    a_test.go:9: no kubectl here\n"),
		ev("output", "TestA/sub", "--- SKIP: TestA/sub (0.00s)\n"), ev("skip", "TestA/sub", ""),
		ev("pass", "TestA", ""), ev("pass", "", "")}
	ok, out := run(t, allowlist{{pkg, "TestOther"}: "elsewhere"}, lines...)
	if ok {
		t.Errorf("a skip outside the allowlist passed:\n%s", out)
	}
	wantContains(t, out, "SKIP "+pkg+" TestA/sub: a_test.go:9: no kubectl here [NOT ALLOWED]",
		"1 passed, 0 failed, 1 skipped", "note: allowlisted "+pkg+" TestOther did not skip")

	ok, out = run(t, allowlist{{pkg, "TestA/sub"}: "needs a GPU"}, lines...)
	if !ok {
		t.Errorf("an allowlisted skip failed the run:\n%s", out)
	}
	wantContains(t, out, "[allowed: needs a GPU]")
}

func TestPackageFailureOutsideTests(t *testing.T) {
	ok, out := run(t, nil, ev("output", "", "TestMain: kube-apiserver did not start\n"), ev("fail", "", ""))
	if ok {
		t.Errorf("a package that failed in TestMain passed:\n%s", out)
	}
	wantContains(t, out, "kube-apiserver did not start", "FAIL "+pkg)
}

func TestBuildFailure(t *testing.T) {
	ok, out := run(t, nil, `{"ImportPath":"example.com/p [example.com/p.test]","Action":"build-output","Output":"p.go:3: undefined: x\n"}`,
		`{"ImportPath":"example.com/p [example.com/p.test]","Action":"build-fail"}`)
	if ok {
		t.Errorf("a build failure passed:\n%s", out)
	}
	wantContains(t, out, "undefined: x", "[build failed]")
}

func TestNoEventsFails(t *testing.T) {
	ok, out := run(t, nil, "go: some message that is not JSON")
	if ok {
		t.Errorf("a run without a single test event passed:\n%s", out)
	}
	wantContains(t, out, "go: some message that is not JSON", "no test events")
}

func TestReadAllowlist(t *testing.T) {
	got, err := readAllowlist(strings.NewReader("# comment\n\nexample.com/p TestA/sub needs a GPU\n"), "skips")
	if err != nil {
		t.Fatal(err)
	}
	if why := got[skipKey{pkg, "TestA/sub"}]; why != "needs a GPU" || len(got) != 1 {
		t.Errorf("allowlist %v", got)
	}
	for _, bad := range []string{"example.com/p TestA\n", "example.com/p TestA why\nexample.com/p TestA again\n"} {
		if _, err := readAllowlist(strings.NewReader(bad), "skips"); err == nil {
			t.Errorf("allowlist %q accepted", bad)
		}
	}
}

func TestInputsSideBySide(t *testing.T) {
	var out bytes.Buffer
	r := newReport(&out, nil)
	a := strings.NewReader(ev("pass", "TestA", "") + "\n" + ev("pass", "", ""))
	b := strings.NewReader(`{"Action":"fail","Package":"example.com/q","Test":"TestB"}` + "\n" +
		`{"Action":"fail","Package":"example.com/q"}`)
	if err := r.consume(a, b); err != nil {
		t.Fatal(err)
	}
	if r.finish() {
		t.Errorf("a run where the second input failed passed:\n%s", out.String())
	}
	wantContains(t, out.String(), "ok   "+pkg, "FAIL example.com/q", "1 passed, 1 failed, 0 skipped")
}

func TestShowPrintsMatchingLines(t *testing.T) {
	var out bytes.Buffer
	r := newReport(&out, nil)
	r.show = regexp.MustCompile(`^harness: `)
	in := ev("output", "", "harness: operator binary /bin/apf-operator\n") + "\n" + ev("output", "", "other\n") + "\n" + ev("pass", "", "")
	if err := r.consume(strings.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if !strings.Contains(got, pkg+": harness: operator binary /bin/apf-operator") || strings.Contains(got, "other") {
		t.Errorf("want only the harness line shown:\n%s", got)
	}
}

func TestUnfinishedPackageFails(t *testing.T) {
	ok, out := run(t, nil, ev("start", "", ""), ev("run", "TestA", ""))
	if ok {
		t.Errorf("a run whose package never finished passed:\n%s", out)
	}
	wantContains(t, out, "never finished", pkg)
}

func TestSlowestAndEndedAt(t *testing.T) {
	var out bytes.Buffer
	r := newReport(&out, nil)
	r.slowestN = 2
	in := strings.Join([]string{
		`{"Time":"2026-11-29T06:00:00Z","Action":"start","Package":"example.com/p"}`,
		`{"Time":"2026-11-29T06:00:03Z","Action":"pass","Package":"example.com/p","Test":"TestFast","Elapsed":0.5}`,
		`{"Time":"2026-11-29T06:01:00Z","Action":"pass","Package":"example.com/p","Test":"TestSlow/sub","Elapsed":50}`,
		`{"Time":"2026-11-29T06:01:00Z","Action":"pass","Package":"example.com/p","Test":"TestSlow","Elapsed":57}`,
		`{"Time":"2026-11-29T06:01:10Z","Action":"fail","Package":"example.com/p","Test":"TestMid","Elapsed":9}`,
		`{"Time":"2026-11-29T06:01:12Z","Action":"fail","Package":"example.com/p","Elapsed":72}`,
	}, "\n")
	if err := r.consume(strings.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	r.finish()
	got := out.String()
	wantContains(t, got, "FAIL example.com/p 72.0s (ended at 1m12s)", "slowest tests (2 of 3):\n    57.0s example.com/p TestSlow\n     9.0s example.com/p TestMid\n")
	if strings.Contains(got, "s example.com/p TestFast") {
		t.Errorf("the fastest test is listed among the two slowest:\n%s", got)
	}
}
