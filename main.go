// Command apf-operator manages API Priority and Fairness configuration: it keeps a safe default
// configuration present, validates RequestPriority and FlowSchema objects at admission, projects
// them onto kube-apiserver's own flow control, which enforces them, and reports whether each
// object is in effect and projected. Subcommands:
//
//	apf-operator [manager] [flags]          run the operator (default)
//	apf-operator validate -f PATH...        check manifests offline, before they merge
//	apf-operator explain -f PATH... --user  show how a request would be classified
//	apf-operator import -f PATH...          convert native flowcontrol objects into manifests
//	apf-operator prune-native               delete the native objects the operator projected
//	apf-operator version                    show the build's version
//
// Installed on PATH as kubectl-apf (a symlink or copy), the binary is a kubectl plugin serving
// `kubectl apf validate`, `kubectl apf explain` and `kubectl apf version`.
package main

import (
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/apf-operator/apf-operator/internal/cli/explain"
	"github.com/apf-operator/apf-operator/internal/cli/importer"
	"github.com/apf-operator/apf-operator/internal/cli/prune"
	"github.com/apf-operator/apf-operator/internal/cli/validate"
)

func main() {
	os.Exit(dispatch(os.Args[0], os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// dispatch runs the binary as the kubectl plugin when it was invoked as kubectl-apf, and as
// apf-operator otherwise.
func dispatch(arg0 string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if isKubectlPlugin(arg0) {
		return runPlugin(args, stdin, stdout, stderr)
	}
	return run(args, stdin, stdout, stderr)
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := "manager"
	if len(args) > 0 && slices.Contains([]string{"-h", "-help", "--help"}, args[0]) {
		cmd, args = "help", args[1:] // the commands, not only the default command's flags
	} else if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "manager":
		return runManager(args, stderr)
	case "validate":
		return validate.Run(args, stdin, stdout, stderr)
	case "explain":
		return explain.Run(args, stdin, stdout, stderr)
	case "import":
		return importer.Run(args, stdin, stdout, stderr)
	case "prune-native":
		return prune.Run(args, stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, version())
		return 0
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
  import     convert kube-apiserver's native flow control objects into manifests; see 'apf-operator import --help'
  prune-native
             delete the native flow control objects the operator projected (helm uninstall runs it)
  version    show the build's version
  help       show this text

Installed on PATH as kubectl-apf, the binary serves 'kubectl apf validate|explain|version'.
`
