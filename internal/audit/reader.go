package audit

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"slices"
)

// Reader reads requests from any number of logs and hands each on once. It is not safe for
// concurrent use.
type Reader struct {
	intern interner
	stats  Stats
	seed   maphash.Seed
	// done holds the ID hashes of the requests handed on, in reading order; Finish sorts it
	// (a slice costs far less than a set of a million IDs, and only Finish needs a lookup).
	done    []uint64
	pending map[uint64]*Request // RequestReceived events still waiting for a later stage
	order   []uint64            // pending IDs in reading order, for a deterministic Finish
	ev      auditEvent
	rec     recordedRequest
}

// NewReader returns an empty Reader.
func NewReader() *Reader {
	return &Reader{intern: newInterner(), seed: maphash.MakeSeed(), pending: map[uint64]*Request{}}
}

// Stats returns what was read so far.
func (r *Reader) Stats() Stats { return r.stats }

// Open opens a log file, "-" for stdin, decompressing it when it starts with gzip's magic
// bytes (whatever its name).
func Open(name string, stdin io.Reader) (io.ReadCloser, error) {
	f := io.NopCloser(stdin)
	if name != "-" {
		file, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		f = file
	}
	br := bufio.NewReaderSize(f, 1<<20)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		z, err := gzip.NewReader(br)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("%s: gzip: %w", name, err), f.Close())
		}
		return struct {
			io.Reader
			io.Closer
		}{z, f}, nil
	}
	return struct {
		io.Reader
		io.Closer
	}{br, f}, nil
}

// ReadAudit reads audit.k8s.io/v1 Event lines from in (name is for messages) and calls emit
// for every request that completes (ResponseComplete or Panic). emit must not keep the
// Request. Only an I/O error stops it; bad lines are counted in Stats.
func (r *Reader) ReadAudit(name string, in io.Reader, emit func(*Request)) error {
	return readLines(name, in, func(n int, line []byte) {
		r.stats.Lines++
		if err := r.ev.decode(line, &r.intern); err != nil {
			r.stats.bad(name, n, err)
			return
		}
		r.stats.Events++
		r.auditEvent(emit)
	})
}

func (r *Reader) auditEvent(emit func(*Request)) {
	e := &r.ev
	id := maphash.Bytes(r.seed, e.id)
	switch string(e.stage) {
	case "ResponseComplete", "Panic":
		r.done = append(r.done, id)
		if _, ok := r.pending[id]; ok {
			delete(r.pending, id)
			r.stats.OtherStages++
		}
		r.stats.Requests++
		emit(e.request(&r.intern))
	case "RequestReceived":
		if _, ok := r.pending[id]; !ok {
			req := *e.request(&r.intern)
			r.pending[id] = &req
			r.order = append(r.order, id)
			return
		}
		r.stats.OtherStages++
	default:
		r.stats.OtherStages++
	}
}

// Finish hands on the requests of which only the RequestReceived event was read, in reading
// order, and counts the IDs that completed more than once (Stats.RepeatedIDs). Call it once,
// after the last log.
func (r *Reader) Finish(emit func(*Request)) {
	slices.Sort(r.done)
	for i := 1; i < len(r.done); i++ {
		if r.done[i] == r.done[i-1] {
			r.stats.RepeatedIDs++
		}
	}
	for _, id := range r.order {
		req, ok := r.pending[id]
		if _, completed := slices.BinarySearch(r.done, id); ok && !completed {
			r.stats.Requests++
			emit(req)
		} else if ok {
			r.stats.OtherStages++ // its completion was read first (logs given out of order)
		}
	}
	r.pending, r.order, r.done = map[uint64]*Request{}, nil, nil
}

// ReadRecorded reads RecordedRequest lines from in and calls emit for each; Finish counts
// the repeated non-empty ids.
func (r *Reader) ReadRecorded(name string, in io.Reader, emit func(*Request)) error {
	return readLines(name, in, func(n int, line []byte) {
		r.stats.Lines++
		req, err := r.rec.decode(line, &r.intern)
		if err != nil {
			r.stats.bad(name, n, err)
			return
		}
		r.stats.Events++
		if req.ID != "" {
			r.done = append(r.done, maphash.String(r.seed, req.ID))
		}
		r.stats.Requests++
		emit(req)
	})
}

// readLines calls line for every non-blank line of in with its 1-based number. Lines may be
// of any length.
func readLines(name string, in io.Reader, line func(n int, b []byte)) error {
	br, ok := in.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(in, 1<<20)
	}
	var long []byte
	for n := 1; ; n++ {
		b, err := br.ReadSlice('\n')
		for errors.Is(err, bufio.ErrBufferFull) {
			long = append(long[:0], b...)
			b, err = br.ReadSlice('\n')
			long = append(long, b...)
			b = long
		}
		if len(bytes.TrimSpace(b)) > 0 {
			line(n, b)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: line %d: %w", name, n, err)
		}
	}
}
