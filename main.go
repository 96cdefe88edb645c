// Command apf-operator manages API Priority and Fairness configuration: it keeps a safe default
// configuration present, validates RequestPriority and FlowSchema objects at admission, and
// reports whether each object is in effect. Subcommands:
//
//	apf-operator [manager] [flags]          run the operator (default)
//	apf-operator validate -f PATH...        check manifests offline, before they merge
//	apf-operator explain -f PATH... --user  show how a request would be classified
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/apf-operator/apf-operator/internal/cli/explain"
	"github.com/apf-operator/apf-operator/internal/cli/validate"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := "manager"
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "manager":
		return runManager(args, stderr)
	case "validate":
		return validate.Run(args, stdin, stdout, stderr)
	case "explain":
		return explain.Run(args, stdin, stdout, stderr)
	case "help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "apf-operator: unknown command %q\n\n%s", cmd, usage)
		return 2
	}
}

const usage = `Usage: apf-operator [command] [flags]

Commands:
  manager    run the operator (the default); see 'apf-operator manager --help'
  validate   validate RequestPriority and FlowSchema manifests offline; see 'apf-operator validate --help'
  explain    show how a request would be classified; see 'apf-operator explain --help'
  help       show this text
`
