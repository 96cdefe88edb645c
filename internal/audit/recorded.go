package audit

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// RecordedRequest documents the recorded request list format: one JSON object per line, for
// requests captured some other way than kube-apiserver's audit log (a proxy, a load test's
// plan). Unknown keys are an error, so that a misspelt key is not silently ignored.
//
//	{"id": "r1", "time": "2026-01-02T15:04:05.123Z", "durationSeconds": 0.02,
//	 "user": "alice", "groups": ["dev", "system:authenticated"],
//	 "verb": "list", "apiGroup": "apps", "resource": "deployments", "namespace": "shop"}
//	{"time": "2026-01-02T15:04:06Z", "user": "system:anonymous", "verb": "get", "path": "/healthz"}
type RecordedRequest struct {
	// ID is optional; requests with the same non-empty id count once.
	ID string `json:"id,omitempty"`
	// Time is when the request arrived (RFC 3339), required.
	Time time.Time `json:"time"`
	// DurationSeconds is how long it took (default 0); End may be given instead.
	DurationSeconds float64    `json:"durationSeconds,omitempty"`
	End             *time.Time `json:"end,omitempty"`
	// User is required; Groups are all of its groups, as kube-apiserver authenticates them
	// (include system:authenticated).
	User   string   `json:"user"`
	Groups []string `json:"groups,omitempty"`
	// Verb is required: the Kubernetes verb of a resource request, the lower-case HTTP method
	// of a non-resource one.
	Verb string `json:"verb"`
	// A resource request gives Resource (and optionally the others); a non-resource request
	// gives Path instead.
	APIGroup    string `json:"apiGroup,omitempty"`
	Resource    string `json:"resource,omitempty"`
	Subresource string `json:"subresource,omitempty"`
	Namespace   string `json:"namespace,omitempty"`
	Name        string `json:"name,omitempty"`
	Path        string `json:"path,omitempty"`
}

// recordedRequest decodes RecordedRequest lines with the same scanner as audit events.
type recordedRequest struct {
	req                  Request
	start, end, duration []byte
	groups               []byte
}

func (d *recordedRequest) decode(line []byte, in *interner) (*Request, error) {
	*d = recordedRequest{}
	s := scanner{b: line}
	err := s.object(func(key []byte) error { return d.field(&s, key, in) })
	if err == nil {
		err = s.end()
	}
	if err == nil {
		err = d.finish(in)
	}
	return &d.req, err
}

func (d *recordedRequest) field(s *scanner, key []byte, in *interner) error {
	var err error
	var v []byte
	switch string(key) {
	case "groups":
		d.groups, err = s.rawArray()
	case "time":
		d.start, err = s.str()
	case "end":
		d.end, err = s.str()
	case "durationSeconds":
		s.ws()
		begin := s.i
		err = s.number()
		d.duration = s.b[begin:s.i]
	default:
		dst := d.stringField(key)
		if dst == nil {
			return fmt.Errorf("unknown key %q (see the recorded request list format in docs/replay.md)", key)
		}
		if v, err = s.str(); err == nil {
			*dst = in.str(v)
		}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	return nil
}

// stringField is where the string value of key goes; nil for an unknown key.
func (d *recordedRequest) stringField(key []byte) *string {
	a := &d.req.Attributes
	switch string(key) {
	case "id":
		return &d.req.ID
	case "user":
		return &a.User
	case "verb":
		return &a.Verb
	case "apiGroup":
		return &a.APIGroup
	case "resource":
		return &a.Resource
	case "subresource":
		return &a.Subresource
	case "namespace":
		return &a.Namespace
	case "name":
		return &a.Name
	case "path":
		return &a.Path
	}
	return nil
}

func (d *recordedRequest) finish(in *interner) error {
	a := &d.req.Attributes
	var err error
	switch {
	case a.User == "":
		return errors.New("user missing")
	case a.Verb == "":
		return errors.New("verb missing")
	case len(d.start) == 0:
		return errors.New("time missing")
	case (a.Resource == "") == (a.Path == ""):
		return errors.New("give resource (a resource request) or path (a non-resource request), not both")
	case a.Path != "" && (a.APIGroup != "" || a.Subresource != "" || a.Namespace != "" || a.Name != ""):
		return errors.New("path describes a non-resource request: drop apiGroup, subresource, namespace and name")
	}
	a.ResourceRequest = a.Resource != ""
	if a.Groups, err = in.groups(d.groups); err != nil {
		return err
	}
	if d.req.Received, err = parseTime(d.start); err != nil {
		return fmt.Errorf("time: %w", err)
	}
	return d.completion()
}

func (d *recordedRequest) completion() error {
	d.req.Completed = d.req.Received
	switch {
	case len(d.end) > 0 && len(d.duration) > 0:
		return errors.New("give end or durationSeconds, not both")
	case len(d.end) > 0:
		end, err := parseTime(d.end)
		if err != nil {
			return fmt.Errorf("end: %w", err)
		}
		d.req.Completed = end
	case len(d.duration) > 0:
		sec, err := strconv.ParseFloat(string(d.duration), 64)
		if err != nil || sec < 0 || sec > 365*24*3600 {
			return fmt.Errorf("durationSeconds %s: want a number of seconds from 0 to a year", d.duration)
		}
		d.req.Completed = d.req.Received.Add(time.Duration(sec * float64(time.Second)))
	}
	if d.req.Completed.Before(d.req.Received) {
		return errors.New("end is before time")
	}
	return nil
}
