package apfmetrics

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
)

// Caps on what a read of kube-apiserver keeps in memory. A /metrics body is streamed: only the
// lines of the APF families are kept, so its cap is on the bytes read (time), the kept part's
// on memory. A body past a cap is an error naming the cap, never an out-of-memory kill.
const (
	// MaxMetricsBytes caps a /metrics body. kube-apiserver's is a few MiB to a few tens of MiB
	// on large clusters; a larger body is not kube-apiserver's metrics or not worth reading.
	MaxMetricsBytes = 256 << 20
	// MaxAPFMetricsBytes caps the APF families kept from a /metrics body (apiserver_flowcontrol_*:
	// at most a few MiB with hundreds of flow schemas and levels).
	MaxAPFMetricsBytes = 32 << 20
	// MaxDumpBytes caps a /debug/api_priority_and_fairness/dump_* table, kept whole.
	MaxDumpBytes = 32 << 20
	// maxLineBytes caps one line of either.
	maxLineBytes = 4 << 20
)

// Streamer is a request whose response body can be streamed (client-go's *rest.Request).
type Streamer interface {
	Stream(ctx context.Context) (io.ReadCloser, error)
}

// Fetch sends req, a GET of path on kube-apiserver, and reads its body within the caps: of a
// /metrics body only the APF families' lines (MaxMetricsBytes read, MaxAPFMetricsBytes kept),
// of any other path (a dump table) the whole body up to MaxDumpBytes.
func Fetch(ctx context.Context, req Streamer, path string) ([]byte, error) {
	body, err := req.Stream(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = body.Close() }()
	if path == MetricsPath {
		return ReadMetrics(body)
	}
	return readLines(body, path, MaxDumpBytes, MaxDumpBytes, nil)
}

// ReadMetrics streams a /metrics body from r and keeps only the lines of the APF families
// (Prefix), within MaxMetricsBytes read and MaxAPFMetricsBytes kept.
func ReadMetrics(r io.Reader) ([]byte, error) {
	return readLines(r, MetricsPath, MaxMetricsBytes, MaxAPFMetricsBytes, []string{Prefix})
}

// readLines streams r line by line and keeps the lines of families with one of prefixes (every
// line when there are none). It fails once more than readCap bytes were read or keptCap kept.
func readLines(r io.Reader, path string, readCap, keptCap int64, prefixes []string) ([]byte, error) {
	counted := &countingReader{r: io.LimitReader(r, readCap+1)}
	sc := bufio.NewScanner(counted)
	sc.Buffer(make([]byte, 0, 64*1024), maxLineBytes)
	var kept bytes.Buffer
	for sc.Scan() {
		line := sc.Bytes()
		if !wanted(string(line), prefixes) {
			continue
		}
		if int64(kept.Len()+len(line)+1) > keptCap {
			return nil, fmt.Errorf("kube-apiserver's %s keeps more than %d bytes (%s) of what the operator reads; "+
				"refusing to read further", path, keptCap, mib(keptCap))
		}
		kept.Write(line)
		kept.WriteByte('\n')
	}
	switch err := sc.Err(); {
	case errors.Is(err, bufio.ErrTooLong):
		return nil, fmt.Errorf("kube-apiserver's %s has a line longer than %d bytes (%s)", path, maxLineBytes, mib(maxLineBytes))
	case err != nil:
		return nil, fmt.Errorf("reading kube-apiserver's %s: %w", path, err)
	case counted.n > readCap:
		return nil, fmt.Errorf("kube-apiserver's %s is larger than %d bytes (%s), the most the operator reads", path, readCap, mib(readCap))
	}
	return kept.Bytes(), nil
}

func mib(n int64) string { return fmt.Sprintf("%d MiB", n>>20) }

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
