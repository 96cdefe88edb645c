// Command benchtable reads the output of `go test -bench` for the test/benchmark module on
// stdin and prints one Markdown table: per case and metric, the values of this project's
// engine (ours), upstream Kubernetes APF (upstream) and a plain semaphore (semaphore), the
// ratios ours/upstream and ours/semaphore, and whether ours meets the goals of issues 5 and 14
// (uncontended at most 2x the semaphore, contended at least 100x upstream's throughput, fairness
// error at most 0.01). The line above the table names the processor and the kernel's clocksource.
// With several runs (-count > 1, or the output of several `go test` runs concatenated, as
// make bench does), each value is the median of the runs, and a list after the table gives the
// uncontended ours/semaphore ratio of each run.
//
// Usage:
//
//	go test -run '^$' -bench . -benchmem ./... | tee bench.txt
//	go run ./cmd/benchtable < bench.txt
//
// It exits with status 1 when the input holds no benchmark result of the three
// implementations, so an empty or broken run cannot print an empty table silently.
package main

import (
	"fmt"
	"os"
)

func main() {
	results, err := Parse(os.Stdin)
	if err != nil {
		fmt.Fprintf(os.Stderr, "benchtable: %v\n", err)
		os.Exit(1)
	}
	if err := Render(os.Stdout, results); err != nil {
		fmt.Fprintf(os.Stderr, "benchtable: %v\n", err)
		os.Exit(1)
	}
}
