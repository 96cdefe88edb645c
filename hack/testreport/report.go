package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"time"
)

// event is one line of `go test -json` (cmd/test2json), build events included.
type event struct {
	Action     string
	Package    string
	Test       string
	Elapsed    float64
	Output     string
	ImportPath string
	Time       time.Time
}

// skip is one skipped test and the reason its output gave.
type skip struct {
	key    skipKey
	reason string
}

// report follows a run's events, prints progress as packages finish and keeps the counts.
type report struct {
	out     io.Writer
	allowed allowlist
	// show selects output lines printed as they come, whatever the result (nil: none).
	show *regexp.Regexp
	// testOutput and pkgOutput hold output until the test or package ends: printed if it failed.
	testOutput map[skipKey][]string
	pkgOutput  map[string][]string
	failedTest map[string]int  // failed tests by package
	running    map[string]bool // packages started and not ended
	events     int
	// first is the earliest event time: package lines say when, after it, they ended.
	first time.Time
	// slowest keeps the top-level tests by time; finish prints the first slowestN.
	slowest  []timedTest
	slowestN int

	passed, failed, buildFailed int
	failedPackages              []string
	skips                       []skip
}

func newReport(out io.Writer, allowed allowlist) *report {
	return &report{out: out, allowed: allowed, testOutput: map[skipKey][]string{},
		pkgOutput: map[string][]string{}, failedTest: map[string]int{}, running: map[string]bool{}}
}

// consume reads events until the end of every input, the inputs at the same time (streams of
// `go test` runs going on side by side), each line whole. Lines that are not JSON (a shell's
// messages, a tool's) are printed as they come.
func (r *report) consume(inputs ...io.Reader) error {
	lines := make(chan []byte)
	errs := make(chan error, len(inputs))
	for _, in := range inputs {
		go func() {
			scanner := bufio.NewScanner(in)
			scanner.Buffer(make([]byte, 0, 64<<10), 16<<20)
			for scanner.Scan() {
				lines <- bytes.Clone(scanner.Bytes())
			}
			errs <- scanner.Err()
		}()
	}
	var firstErr error
	for open := len(inputs); open > 0; {
		select {
		case line := <-lines:
			r.line(line)
		case err := <-errs:
			open--
			if firstErr == nil {
				firstErr = err
			}
		}
	}
	return firstErr
}

func (r *report) line(line []byte) {
	var e event
	if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
		fmt.Fprintln(r.out, string(line))
		return
	}
	r.handle(e)
}

func (r *report) handle(e event) {
	r.events++
	if !e.Time.IsZero() && (r.first.IsZero() || e.Time.Before(r.first)) {
		r.first = e.Time
	}
	switch e.Action {
	case "start":
		r.running[e.Package] = true
	case "build-output":
		fmt.Fprint(r.out, e.Output)
	case "build-fail":
		r.buildFailed++
		fmt.Fprintf(r.out, "FAIL %s [build failed]\n", e.ImportPath)
	case "output":
		if r.show != nil && r.show.MatchString(e.Output) {
			fmt.Fprintf(r.out, "%s: %s", e.Package, e.Output)
		}
		if e.Test == "" {
			r.pkgOutput[e.Package] = append(r.pkgOutput[e.Package], e.Output)
		} else {
			k := skipKey{e.Package, e.Test}
			r.testOutput[k] = append(r.testOutput[k], e.Output)
		}
	case "pass", "fail", "skip":
		if e.Test == "" {
			r.packageEnded(e)
		} else {
			r.testEnded(e)
		}
	}
}

func (r *report) testEnded(e event) {
	k := skipKey{e.Package, e.Test}
	output := r.testOutput[k]
	delete(r.testOutput, k)
	if e.Action != "skip" && !strings.Contains(e.Test, "/") {
		r.slowest = append(r.slowest, timedTest{key: k, elapsed: e.Elapsed})
	}
	switch e.Action {
	case "pass":
		r.passed++
	case "fail":
		r.failed++
		r.failedTest[e.Package]++
		fmt.Fprintf(r.out, "--- FAIL %s %s (%.1fs)\n%s", e.Package, e.Test, e.Elapsed, strings.Join(output, ""))
	case "skip":
		r.skips = append(r.skips, skip{key: k, reason: skipReason(output)})
	}
}

func (r *report) packageEnded(e event) {
	output := r.pkgOutput[e.Package]
	delete(r.pkgOutput, e.Package)
	delete(r.running, e.Package)
	switch e.Action {
	case "pass":
		fmt.Fprintf(r.out, "ok   %s %.1fs%s\n", e.Package, e.Elapsed, r.endedAt(e))
	case "fail":
		r.failedPackages = append(r.failedPackages, e.Package)
		// A package can fail outside any test (TestMain, a panic, a timeout): show its output.
		if r.failedTest[e.Package] == 0 {
			fmt.Fprint(r.out, strings.Join(output, ""))
		}
		fmt.Fprintf(r.out, "FAIL %s %.1fs%s\n", e.Package, e.Elapsed, r.endedAt(e))
	}
	// "skip" of a package: it has no test files; nothing to say.
}

// skipReason is what a skipped test printed (its t.Skip message), without the framing lines.
func skipReason(output []string) string {
	var lines []string
	for _, o := range output {
		for _, l := range strings.Split(o, "\n") {
			l = strings.TrimSpace(l)
			if l == "" || strings.HasPrefix(l, "=== ") || strings.HasPrefix(l, "--- SKIP") {
				continue
			}
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return "(no reason given)"
	}
	return strings.Join(lines, " | ")
}

// finish prints the skipped tests, the verdict and the counts, and reports whether the run
// passed: no failed test or build, no failed package, no skip outside the allowlist, and at
// least one event (an empty input is a broken pipeline, not a success).
func (r *report) finish() bool {
	r.printSlowest()
	unallowed := r.printSkips()
	r.printStale()
	ok := true
	if r.events == 0 {
		fmt.Fprintln(r.out, "FAIL: no test events read: did go test run with -json?")
		ok = false
	}
	if len(r.running) > 0 {
		unfinished := make([]string, 0, len(r.running))
		for p := range r.running {
			unfinished = append(unfinished, p)
		}
		sort.Strings(unfinished)
		fmt.Fprintf(r.out, "FAIL: started and never finished (killed, timed out?): %s\n", strings.Join(unfinished, " "))
		ok = false
	}
	if unallowed > 0 {
		fmt.Fprintf(r.out, "FAIL: %d skipped test(s) not in the allowlist; fix them or add them with a reason\n", unallowed)
		ok = false
	}
	if r.failed > 0 || r.buildFailed > 0 || len(r.failedPackages) > 0 {
		fmt.Fprintf(r.out, "FAIL: %d build(s) failed; packages failed: %s\n", r.buildFailed, strings.Join(r.failedPackages, " "))
		ok = false
	}
	fmt.Fprintf(r.out, "%d passed, %d failed, %d skipped\n", r.passed, r.failed, len(r.skips))
	return ok
}

// printSkips lists every skipped test with its reason and returns how many the allowlist
// does not name.
func (r *report) printSkips() (unallowed int) {
	if len(r.skips) == 0 {
		return 0
	}
	sort.Slice(r.skips, func(i, j int) bool { return r.skips[i].key.String() < r.skips[j].key.String() })
	fmt.Fprintf(r.out, "\nskipped tests (%d):\n", len(r.skips))
	for _, s := range r.skips {
		why, ok := r.allowed[s.key]
		verdict := "allowed: " + why
		if !ok {
			verdict = "NOT ALLOWED"
			unallowed++
		}
		fmt.Fprintf(r.out, "  SKIP %s: %s [%s]\n", s.key, s.reason, verdict)
	}
	return unallowed
}

// printStale names allowlist entries that did not skip in this run: a note, not a failure
// (the run may not have covered their package).
func (r *report) printStale() {
	seen := map[skipKey]bool{}
	for _, s := range r.skips {
		seen[s.key] = true
	}
	var stale []string
	for k := range r.allowed {
		if !seen[k] {
			stale = append(stale, k.String())
		}
	}
	sort.Strings(stale)
	for _, k := range stale {
		fmt.Fprintf(r.out, "note: allowlisted %s did not skip in this run\n", k)
	}
}
