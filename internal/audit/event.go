package audit

import (
	"bytes"
	"errors"
	"fmt"
	"time"
)

// auditEvent holds the fields of one audit.k8s.io/v1 Event that classification needs, as
// slices of the line (valid until the next line).
type auditEvent struct {
	id, stage, verb, uri        []byte
	user, impersonated          userInfo
	hasObject                   bool
	group, resource, sub, ns, n []byte
	received, completed         []byte
	kind                        []byte
	groups                      []string // the classified user's, interned
	req                         Request
}

type userInfo struct {
	set    bool
	name   []byte
	groups []byte // the raw JSON array
}

func (e *auditEvent) reset() {
	req := e.req
	*e = auditEvent{req: req}
}

func (e *auditEvent) decode(line []byte, in *interner) error {
	e.reset()
	s := scanner{b: line}
	err := s.object(func(key []byte) error { return e.field(&s, key) })
	if err == nil {
		err = s.end()
	}
	if err != nil {
		return err
	}
	switch {
	case len(e.kind) > 0 && string(e.kind) != "Event":
		return fmt.Errorf("kind %q: want an audit.k8s.io/v1 Event", e.kind)
	case len(e.id) == 0:
		return errors.New("auditID missing")
	case len(e.stage) == 0:
		return errors.New("stage missing")
	case len(e.verb) == 0:
		return errors.New("verb missing")
	case len(e.received) == 0:
		return errors.New("requestReceivedTimestamp missing")
	case !e.user.set:
		return errors.New("user missing")
	}
	if e.impersonated.set {
		e.groups, err = in.groups(e.impersonated.groups)
	} else {
		e.groups, err = in.groups(e.user.groups)
	}
	if err != nil {
		return err
	}
	return e.times()
}

func (e *auditEvent) field(s *scanner, key []byte) error {
	var err error
	switch string(key) {
	case "kind":
		e.kind, err = s.str()
	case "auditID":
		e.id, err = s.str()
	case "stage":
		e.stage, err = s.str()
	case "verb":
		e.verb, err = s.str()
	case "requestURI":
		e.uri, err = s.str()
	case "user":
		err = e.user.decode(s)
	case "impersonatedUser":
		err = e.impersonated.decode(s)
	case "objectRef":
		err = e.objectRef(s)
	case "requestReceivedTimestamp":
		e.received, err = s.str()
	case "stageTimestamp":
		e.completed, err = s.str()
	default:
		err = s.skip()
	}
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	return nil
}

func (u *userInfo) decode(s *scanner) error {
	if s.peek() == 'n' {
		return s.literal("null")
	}
	u.set = true
	return s.object(func(key []byte) error {
		var err error
		switch string(key) {
		case "username":
			u.name, err = s.str()
		case "groups":
			u.groups, err = s.rawArray()
		default:
			err = s.skip()
		}
		return err
	})
}

func (e *auditEvent) objectRef(s *scanner) error {
	if s.peek() == 'n' {
		return s.literal("null")
	}
	e.hasObject = true
	return s.object(func(key []byte) error {
		var err error
		switch string(key) {
		case "resource":
			e.resource, err = s.str()
		case "subresource":
			e.sub, err = s.str()
		case "apiGroup":
			e.group, err = s.str()
		case "namespace":
			e.ns, err = s.str()
		case "name":
			e.n, err = s.str()
		default:
			err = s.skip()
		}
		return err
	})
}

// times checks the timestamps now, so that a bad one is a bad line.
func (e *auditEvent) times() error {
	var err error
	if e.req.Received, err = parseTime(e.received); err != nil {
		return fmt.Errorf("requestReceivedTimestamp: %w", err)
	}
	e.req.Completed = e.req.Received
	if len(e.completed) > 0 && string(e.stage) != "RequestReceived" {
		if e.req.Completed, err = parseTime(e.completed); err != nil {
			return fmt.Errorf("stageTimestamp: %w", err)
		}
	}
	return nil
}

// request builds the Request of the decoded event. The result is reused by the next event.
func (e *auditEvent) request(in *interner) *Request {
	r := &e.req
	r.ID = string(e.id) // unique per request: interning would only grow the table
	u := &e.user
	if e.impersonated.set {
		u = &e.impersonated
	}
	a := &r.Attributes
	a.Reset()
	a.User, a.Groups, a.Verb = in.str(u.name), e.groups, in.str(e.verb)
	a.ResourceRequest = e.hasObject
	if e.hasObject {
		a.APIGroup, a.Resource, a.Subresource = in.str(e.group), in.str(e.resource), in.str(e.sub)
		a.Namespace, a.Name = in.str(e.ns), in.str(e.n)
	} else {
		path := e.uri
		if i := bytes.IndexByte(path, '?'); i >= 0 {
			path = path[:i]
		}
		a.Path = in.str(path)
	}
	return r
}

// parseTime reads kube-apiserver's timestamps (RFC 3339 with micro- or nanoseconds), within
// the years that nanoseconds since 1970 in an int64 can hold (1678 to 2261).
func parseTime(b []byte) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, string(b))
	if err == nil && (t.Year() < 1678 || t.Year() > 2261) {
		err = fmt.Errorf("%s: out of range (years 1678 to 2261)", b)
	}
	return t, err
}
