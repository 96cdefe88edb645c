package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fatalRecorder is a testing.TB whose Fatalf records the message instead of ending the test.
type fatalRecorder struct {
	testing.TB
	fatal string
}

func (r *fatalRecorder) Helper() {}

func (r *fatalRecorder) Fatalf(format string, args ...any) { r.fatal = fmt.Sprintf(format, args...) }

func TestEventuallyTakesEveryConditionShape(t *testing.T) {
	calls := 0
	// notUntilThird holds from the third call on.
	notUntilThird := func() error {
		if calls++; calls < 3 {
			return errors.New("not yet")
		}
		return nil
	}
	Eventually(t, 10*time.Second, "an error condition", notUntilThird)
	calls = 0
	Eventually(t, 10*time.Second, "a context condition", func(context.Context) error { return notUntilThird() })
	calls = 0
	Eventually(t, 10*time.Second, "a boolean condition", func(context.Context) (bool, error) {
		return notUntilThird() == nil, nil
	})
	if calls != 3 {
		t.Errorf("the boolean condition ran %d times, want 3", calls)
	}
}

func TestEventuallyFailsWithWhatAndTheLastError(t *testing.T) {
	r := &fatalRecorder{TB: t}
	start := time.Now()
	Eventually(r, 300*time.Millisecond, "the moon", func() error { return errors.New("still cheese") })
	if !strings.Contains(r.fatal, "waiting for the moon: still cheese") {
		t.Errorf("Fatalf message %q, want what was awaited and the last error", r.fatal)
	}
	if time.Since(start) < 300*time.Millisecond {
		t.Errorf("gave up after %s, before the timeout", time.Since(start))
	}
	r.fatal = ""
	Eventually(r, 300*time.Millisecond, "a flag", func(context.Context) (bool, error) { return false, nil })
	if !strings.Contains(r.fatal, "waiting for a flag: condition not met") {
		t.Errorf("Fatalf message %q for a false boolean condition", r.fatal)
	}
}

func TestOperatorBinaryFromTheEnvironment(t *testing.T) {
	binary := filepath.Join(t.TempDir(), "apf-operator")
	if err := os.WriteFile(binary, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(BinaryEnv, binary)
	got, err := OperatorBinary()
	if err != nil || got != binary {
		t.Fatalf("OperatorBinary() = %q, %v; want %q from %s", got, err, binary, BinaryEnv)
	}
	if operatorBinary.builtIn != "" {
		t.Errorf("built a binary in %s although %s was set", operatorBinary.builtIn, BinaryEnv)
	}
}
