package replay

import (
	"os"
	"testing"
)

// TestWriteSyntheticLog writes a synthetic log to $REPLAY_SYNTHETIC_LOG (REPLAY_SYNTHETIC_N
// events), for trying the command by hand; skipped otherwise.
func TestWriteSyntheticLog(t *testing.T) {
	path := os.Getenv("REPLAY_SYNTHETIC_LOG")
	if path == "" {
		t.Skip("REPLAY_SYNTHETIC_LOG not set")
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeSyntheticLog(f, 20000, 3); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
