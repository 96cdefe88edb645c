package harness

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/apf-operator/apf-operator/test/envtestutil"
)

// BinaryEnv names the environment variable that hands every suite of one `make test` the
// operator binary built once (bin/apf-operator), instead of each package building its own.
const BinaryEnv = "APF_OPERATOR_BINARY"

// operatorBinary is the binary of this test process: found or built on first use.
var operatorBinary struct {
	once sync.Once
	path string
	// builtIn is the temporary directory the binary was built in ("" when it came from
	// BinaryEnv); removeBuiltBinary removes it.
	builtIn string
	err     error
}

// OperatorBinary returns the path of the apf-operator binary: $APF_OPERATOR_BINARY when set,
// else one built from this repository, once per test process, into a temporary directory that
// Main removes. It logs one line to standard error either way, so that a `make test` log shows
// how many times the binary was built.
func OperatorBinary() (string, error) {
	b := &operatorBinary
	b.once.Do(func() {
		if path := os.Getenv(BinaryEnv); path != "" {
			b.path, b.err = filepath.Abs(path)
			if b.err == nil {
				_, b.err = os.Stat(b.path)
			}
			fmt.Fprintf(os.Stderr, "harness: operator binary %s (from %s)\n", b.path, BinaryEnv)
			return
		}
		start := time.Now()
		if b.builtIn, b.err = os.MkdirTemp("", "apf-operator-bin-"); b.err != nil {
			return
		}
		b.path, b.err = buildOperator(b.builtIn)
		fmt.Fprintf(os.Stderr, "harness: built the operator binary in %s (%s unset)\n",
			time.Since(start).Round(time.Millisecond), BinaryEnv)
	})
	return b.path, b.err
}

// removeBuiltBinary removes the binary OperatorBinary built, if it built one.
func removeBuiltBinary() {
	if dir := operatorBinary.builtIn; dir != "" {
		_ = os.RemoveAll(dir)
	}
}

// buildOperator builds the operator's binary from this repository into dir.
func buildOperator(dir string) (string, error) {
	binary := filepath.Join(dir, "apf-operator")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Dir, build.Stdout, build.Stderr = envtestutil.RepoRoot(), os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("building the operator: %w", err)
	}
	return binary, nil
}
