package audit

import (
	"time"

	"github.com/apf-operator/apf-operator/internal/apf/request"
)

// Request is one request read from a log.
type Request struct {
	// ID is the audit ID (or the recorded request's id); empty when the input has none.
	ID string
	// Attributes are what flow control classifies. Its strings are interned and shared: read
	// only.
	Attributes request.Attributes
	// Received is when kube-apiserver received the request; Completed when it finished (equal
	// to Received when the log does not say, e.g. only a RequestReceived event).
	Received, Completed time.Time
}

// LineError is an input line that could not be read.
type LineError struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Err  string `json:"error"`
}

// Stats counts what a Reader read.
type Stats struct {
	// Lines is the number of non-empty lines read; Events the number that were valid.
	Lines  int `json:"lines"`
	Events int `json:"events"`
	// Requests is the number of requests handed on (each counts once).
	Requests int `json:"requests"`
	// OtherStages counts the valid events that did not count as a request: ResponseStarted,
	// and a RequestReceived whose later stage is in the log.
	OtherStages int `json:"otherStages"`
	// RepeatedIDs counts the requests whose ID completed more than once: the same log given
	// twice, or overlapping logs. They are counted each time (a replay streams and does not
	// hold a million IDs to look up); a non-zero count means the input should be checked.
	RepeatedIDs int `json:"repeatedIDs"`
	// BadLines is the number of lines that could not be read; BadLineSamples the first few.
	BadLines       int         `json:"badLines"`
	BadLineSamples []LineError `json:"badLineSamples,omitempty"`
}

// maxBadSamples bounds Stats.BadLineSamples.
const maxBadSamples = 5

func (s *Stats) bad(file string, line int, err error) {
	s.BadLines++
	if len(s.BadLineSamples) < maxBadSamples {
		s.BadLineSamples = append(s.BadLineSamples, LineError{File: file, Line: line, Err: err.Error()})
	}
}
