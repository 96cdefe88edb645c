package harness

import (
	"errors"
	"fmt"
	"syscall"
	"testing"
)

// stopper is a process whose Stop fails with errs in turn, then succeeds.
type stopper struct {
	errs  []error
	calls int
}

func (s *stopper) Stop() error {
	s.calls++
	if len(s.errs) == 0 {
		return nil
	}
	err := s.errs[0]
	s.errs = s.errs[1:]
	return err
}

// TestStopKilledRetriesUntilRecorded retries Stop while it fails with envtest's ESRCH (the
// process reaped, its exit not yet recorded) and returns its first other answer.
func TestStopKilledRetriesUntilRecorded(t *testing.T) {
	esrch := fmt.Errorf("unable to signal for process kube-apiserver to stop: %w", syscall.ESRCH)
	s := &stopper{errs: []error{esrch, esrch}}
	if err := stopKilled(s); err != nil || s.calls != 3 {
		t.Errorf("stopKilled = %v after %d calls, want nil after 3", err, s.calls)
	}
	other := errors.New("timeout waiting for process kube-apiserver to stop")
	s = &stopper{errs: []error{esrch, other}}
	if err := stopKilled(s); !errors.Is(err, other) || s.calls != 2 {
		t.Errorf("stopKilled = %v after %d calls, want %v after 2", err, s.calls, other)
	}
}
