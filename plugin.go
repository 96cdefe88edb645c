package main

import (
	"fmt"
	"io"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/apf-operator/apf-operator/internal/cli/explain"
	"github.com/apf-operator/apf-operator/internal/cli/validate"
)

// pluginName is the name under which the binary serves as a kubectl plugin: kubectl runs
// `kubectl-apf` from PATH for `kubectl apf ...`, passing the arguments after `apf` unchanged.
const pluginName = "kubectl-apf"

// isKubectlPlugin reports whether the binary was invoked as the kubectl plugin (a symlink or
// copy named kubectl-apf, or kubectl-apf.exe on Windows).
func isKubectlPlugin(arg0 string) bool {
	return strings.TrimSuffix(filepath.Base(arg0), ".exe") == pluginName
}

// runPlugin serves `kubectl apf COMMAND`: the offline and read-only commands, with the same
// flags as `apf-operator COMMAND` (explain's live mode takes --kubeconfig and --context, as
// kubectl does not pass its own flags to plugins). The operator itself is not a plugin command.
func runPlugin(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := "help"
	if len(args) > 0 {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "validate":
		return validate.Run(args, stdin, stdout, stderr)
	case "explain":
		return explain.Run(args, stdin, stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, version())
		return 0
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, pluginUsage)
		return 0
	default:
		fmt.Fprintf(stderr, "kubectl apf: unknown command %q\n\n%s", cmd, pluginUsage)
		return 2
	}
}

// version describes the build: the module version (a tag when installed with go install) and
// the VCS revision Go stamped into the binary, if any.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "apf-operator (no build information)"
	}
	v := "apf-operator " + info.Main.Version
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" {
			v += " (" + s.Value + ")"
		}
	}
	return v + " " + info.GoVersion
}

const pluginUsage = `Usage: kubectl apf COMMAND [flags]

apf-operator as a kubectl plugin (the apf-operator binary installed on PATH as kubectl-apf).

Commands:
  validate   validate RequestPriority and FlowSchema manifests offline; see 'kubectl apf validate --help'
  explain    show how a request would be classified, from manifests (-f) or the live cluster
             (--kubeconfig, --context); see 'kubectl apf explain --help'
  version    show the build's version
  help       show this text
`
