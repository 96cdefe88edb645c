package apfmetrics

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"
)

// repeated is a reader of line repeated until n bytes, without holding them.
type repeated struct {
	line  []byte
	n     int64
	off   int
	chunk []byte // line repeated to about 64 KiB: one copy per Read, not one per line
}

func (r *repeated) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	if r.chunk == nil {
		r.chunk = bytes.Repeat(r.line, max(1, 64*1024/len(r.line)))
	}
	written := 0
	for written < len(p) && r.n > 0 {
		c := copy(p[written:], r.chunk[r.off:])
		if int64(c) > r.n {
			c = int(r.n)
		}
		written += c
		r.n -= int64(c)
		r.off = (r.off + c) % len(r.chunk)
	}
	return written, nil
}

func TestReadMetricsKeepsOnlyAPFFamilies(t *testing.T) {
	raw, err := os.ReadFile("testdata/kube-apiserver-1.36.3.metrics")
	if err != nil {
		t.Fatal(err)
	}
	kept, err := ReadMetrics(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if len(kept) == 0 || len(kept) >= len(raw) {
		t.Fatalf("kept %d of %d bytes; want the APF part only", len(kept), len(raw))
	}
	for _, line := range strings.Split(strings.TrimSpace(string(kept)), "\n") {
		if !wanted(line, []string{Prefix}) {
			t.Fatalf("kept a line of another family: %q", line)
		}
	}
	want, err := ParseSeats(raw)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseSeats(kept)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("seats from the kept part %+v, from the whole body %+v", got, want)
	}
}

func TestReadMetricsCaps(t *testing.T) {
	cases := []struct {
		name    string
		line    string
		n       int64
		wantErr string
	}{
		{"body past the read cap", "apiserver_request_total{verb=\"GET\"} 1\n", MaxMetricsBytes + 1,
			"larger than 268435456 bytes (256 MiB)"},
		{"APF part past the kept cap", "apiserver_flowcontrol_dispatched_requests_total{priority_level=\"x\"} 1\n",
			MaxAPFMetricsBytes + 100, "keeps more than 33554432 bytes (32 MiB)"},
		{"a line past the line cap", "apiserver_flowcontrol_x", maxLineBytes + 10, "a line longer than 4194304 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadMetrics(&repeated{line: []byte(c.line), n: c.n})
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("error %v; want one naming the cap (%q)", err, c.wantErr)
			}
		})
	}
	t.Run("body at the read cap", func(t *testing.T) {
		line := "apiserver_request_total{verb=\"GET\"} 1\n"
		body := &repeated{line: []byte(line), n: MaxMetricsBytes - MaxMetricsBytes%int64(len(line))}
		if _, err := ReadMetrics(body); err != nil {
			t.Fatalf("a body within the cap: %v", err)
		}
	})
}

// streamer is a fake request whose body is given.
type streamer struct {
	body   string
	err    error
	closed bool
}

func (s *streamer) Stream(context.Context) (io.ReadCloser, error) {
	if s.err != nil {
		return nil, s.err
	}
	return s, nil
}

func (s *streamer) Read(p []byte) (int, error) {
	n := copy(p, s.body)
	s.body = s.body[n:]
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

func (s *streamer) Close() error { s.closed = true; return nil }

func TestFetch(t *testing.T) {
	ctx := context.Background()
	metrics := &streamer{body: "apiserver_request_total 1\n" + metricsText}
	got, err := Fetch(ctx, metrics, MetricsPath)
	if err != nil || !metrics.closed {
		t.Fatalf("Fetch(/metrics): %v, closed=%v; want the body read and closed", err, metrics.closed)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(got)), "\n") {
		if !strings.Contains(metricsText, line) || !wanted(line, []string{Prefix}) {
			t.Fatalf("Fetch(/metrics) kept %q, not an APF line of the body", line)
		}
	}
	if want, _ := ParseSeats([]byte(metricsText)); want == nil || !reflect.DeepEqual(mustSeats(t, got), want) {
		t.Fatalf("seats of the fetched part differ from the body's")
	}
	dump := &streamer{body: "PriorityLevelName, ActiveQueues\nexempt, 0\n"}
	got, err = Fetch(ctx, dump, DumpPriorityLevelsPath)
	if err != nil || string(got) != "PriorityLevelName, ActiveQueues\nexempt, 0\n" {
		t.Fatalf("Fetch(dump) = %q, %v; want the whole table", got, err)
	}
	refused := errors.New("forbidden")
	if _, err := Fetch(ctx, &streamer{err: refused}, MetricsPath); !errors.Is(err, refused) {
		t.Fatalf("Fetch with a failing request = %v; want its error", err)
	}
}

func mustSeats(t *testing.T, raw []byte) *Seats {
	t.Helper()
	s, err := ParseSeats(raw)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
