// Command testreport reads `go test -json` from its standard input and prints what a person
// wants from a test run: each package's ok/FAIL line with its time, the output of every
// failed test, every skipped test with its reason, and a last line "N passed, N failed,
// N skipped". It exits non-zero when a test or a build failed, or when a test skipped that the
// allowlist (hack/test-skips.txt) does not name: a skip must not pass for a success.
//
// Usage (several files, for example FIFOs, are read side by side as one run):
//
//	go test -json ./... 2>&1 | go run ./hack/testreport -skips hack/test-skips.txt
//	go run ./hack/testreport -skips hack/test-skips.txt lane1.json lane2.json
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
)

func main() {
	skipsPath := flag.String("skips", "hack/test-skips.txt", "the allowlist of skipped tests: package, test name, why")
	show := flag.String("show", "", "a regular expression: output lines that match it are printed as they come, whatever the result")
	slowest := flag.Int("slowest", 0, "list this many top-level tests that ran longest")
	flag.Parse()
	allowed, err := readAllowlistFile(*skipsPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		os.Exit(2)
	}
	inputs, err := openInputs(flag.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		os.Exit(2)
	}
	r := newReport(os.Stdout, allowed)
	r.slowestN = *slowest
	if *show != "" {
		if r.show, err = regexp.Compile(*show); err != nil {
			fmt.Fprintln(os.Stderr, "testreport: -show:", err)
			os.Exit(2)
		}
	}
	if err := r.consume(inputs...); err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		os.Exit(2)
	}
	if !r.finish() {
		os.Exit(1)
	}
}

// openInputs opens the named files, or returns standard input when there are none.
func openInputs(names []string) ([]io.Reader, error) {
	if len(names) == 0 {
		return []io.Reader{os.Stdin}, nil
	}
	inputs := make([]io.Reader, 0, len(names))
	for _, name := range names {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		inputs = append(inputs, f)
	}
	return inputs, nil
}
