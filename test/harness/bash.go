package harness

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"testing"
	"time"
)

// Bash runs bash with args (a documented command: "-c", command) in dir, for at most timeout,
// with binDir first on PATH and env after the process's environment, as the suites that run
// the documentation's commands do. It returns what the command printed and its exit code, and
// fails t when bash could not run or was killed.
func Bash(t testing.TB, timeout time.Duration, dir, binDir string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH")), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code = cmd.ProcessState.ExitCode()
	if err != nil && code < 0 {
		t.Fatalf("%s: %v", args[len(args)-1], err)
	}
	return out.String(), errOut.String(), code
}
