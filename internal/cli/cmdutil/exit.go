// Package cmdutil holds what every apf-operator command shares: how an error becomes an exit
// code and a single message.
package cmdutil

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// Exit codes, documented in docs/cli.md.
const (
	// ExitOK: the command did what was asked (validate: no errors found).
	ExitOK = 0
	// ExitFailure: the command ran and found a problem (validate: findings) or could not finish
	// (a cluster unreachable, a file unreadable).
	ExitFailure = 1
	// ExitUsage: the command line was wrong (an unknown flag or command, a missing argument).
	ExitUsage = 2
)

// ExitError ends a command with Code. Err, if any, is printed once, after the command's name;
// a nil Err means the command already said why.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit code %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// UsageErrorf is a command-line error: exit code 2.
func UsageErrorf(format string, args ...any) error {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf(format, args...)}
}

// Execute runs root with args and returns the process's exit code. Every error is printed
// exactly once, to streams.ErrOut, prefixed with the command path.
func Execute(root *cobra.Command, args []string, streams genericiooptions.IOStreams) int {
	if args == nil {
		args = []string{} // cobra would read os.Args for nil
	}
	root.SetArgs(args)
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	root.SilenceErrors = true
	root.SilenceUsage = true
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &ExitError{Code: ExitUsage, Err: fmt.Errorf("%w\nSee '%s --help' for usage", err, c.CommandPath())}
	})
	cmd, err := root.ExecuteC()
	if err == nil {
		return ExitOK
	}
	code := ExitFailure
	var exit *ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.Code
		if exit.Err == nil {
			return code
		}
	case strings.HasPrefix(err.Error(), "unknown command"), strings.HasPrefix(err.Error(), "unknown flag"),
		strings.Contains(err.Error(), "arg(s)"):
		code = ExitUsage
	}
	fmt.Fprintf(streams.ErrOut, "%s: %v\n", cmd.CommandPath(), err)
	return code
}
