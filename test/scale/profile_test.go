package scale

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

var cpuProfile = flag.String("scale.cpu-profile", "", "file to write a CPU profile of the operator process into, "+
	"taken over -scale.profile-duration from the start of the apply (-scale.operator=process; go tool pprof reads it)")

var profileDuration = flag.Duration("scale.profile-duration", 30*time.Second, "length of -scale.cpu-profile")

// profiler takes a CPU profile of the operator process through its --pprof-bind-address.
type profiler struct {
	done chan error
}

// startProfile starts a CPU profile of the process serving pprof at addr, written to path
// when it ends; nil when no profile is asked for.
func startProfile(ctx context.Context, addr, path string, length time.Duration) *profiler {
	if path == "" || addr == "" {
		return nil
	}
	p := &profiler{done: make(chan error, 1)}
	go func() { p.done <- fetchProfile(ctx, addr, path, length) }()
	return p
}

func fetchProfile(ctx context.Context, addr, path string, length time.Duration) error {
	url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, int(length.Seconds()))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := (&http.Client{Timeout: length + time.Minute}).Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// wait returns once the profile is written (nil p: at once).
func (p *profiler) wait() error {
	if p == nil {
		return nil
	}
	return <-p.done
}
