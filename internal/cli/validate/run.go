package validate

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// Exit codes of Run.
const (
	ExitOK    = 0
	ExitError = 1
	ExitUsage = 2
)

// options are the parsed command line.
type options struct {
	paths  []string
	output string
}

// PathList is a flag.Value that collects repeated (or comma-separated) -f values; explain
// takes its manifests the same way.
type PathList []string

// String joins the paths with commas.
func (p *PathList) String() string { return strings.Join(*p, ",") }

// Set adds the comma-separated paths of one -f value.
func (p *PathList) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s != "" {
			*p = append(*p, s)
		}
	}
	return nil
}

// Run executes `apf-operator validate` with args (the arguments after the subcommand) and
// returns the exit code.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	opts, err := parse(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return ExitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "Error: %v\nUsage: apf-operator validate -f PATH [-f PATH]... [-o text|json]\n", err)
		return ExitUsage
	}
	docs, readFindings := collect(opts.paths, stdin)
	checked, objects := check(context.Background(), docs)
	findings := append(readFindings, checked...)
	sortFindings(findings)
	if err := report(findings, opts.output, stdout); err != nil {
		fmt.Fprintf(stderr, "Error: %v\n", err)
		return ExitError
	}
	errs, warnings := count(findings)
	fmt.Fprintf(stderr, "%d object(s) checked: %d error(s), %d warning(s)\n", objects, errs, warnings)
	if errs > 0 {
		return ExitError
	}
	return ExitOK
}

// parse reads the flags; paths may also follow the flags or sit between them.
func parse(args []string, stderr io.Writer) (options, error) {
	var paths PathList
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Var(&paths, "f", "a manifest file, a directory (searched recursively) or - for standard input; repeatable")
	output := fs.String("o", "text", "output format: text or json")
	for {
		if err := fs.Parse(args); err != nil {
			return options{}, err
		}
		if fs.NArg() == 0 {
			break
		}
		paths = append(paths, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(paths) == 0 {
		return options{}, errors.New("no manifests given: pass -f PATH (a file, a directory or -)")
	}
	if *output != "text" && *output != "json" {
		return options{}, fmt.Errorf("unsupported output %q: use text or json", *output)
	}
	return options{paths: paths, output: *output}, nil
}
