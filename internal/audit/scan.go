package audit

import (
	"encoding/json"
	"errors"
	"fmt"
)

// scanner reads one JSON value without building it: callers walk an object key by key, read
// the few values they need as raw strings and skip the rest. It decodes only what a request's
// classification needs, which is most of the speed of a replay (an audit event at level
// Metadata carries many fields no classification reads).
type scanner struct {
	b []byte
	i int
}

var errSyntax = errors.New("invalid JSON")

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, 0 at the end.
func (s *scanner) peek() byte {
	s.ws()
	if s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

func (s *scanner) expect(c byte) error {
	if s.peek() != c {
		return s.errorf("want %q", c)
	}
	s.i++
	return nil
}

func (s *scanner) errorf(format string, args ...any) error {
	return fmt.Errorf("%w at byte %d: %s", errSyntax, s.i+1, fmt.Sprintf(format, args...))
}

// object calls field for every key of the object at the cursor; field must consume the value
// (with str, strs, object or skip).
func (s *scanner) object(field func(key []byte) error) error {
	if err := s.expect('{'); err != nil {
		return err
	}
	if s.peek() == '}' {
		s.i++
		return nil
	}
	for {
		if s.peek() != '"' {
			return s.errorf("want a key (a string)")
		}
		key, err := s.str()
		if err != nil {
			return err
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		if err := field(key); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return nil
		default:
			return s.errorf("want ',' or '}'")
		}
	}
}

// str reads a string. The result aliases the input unless the string has escapes; a null
// reads as "".
func (s *scanner) str() ([]byte, error) {
	switch s.peek() {
	case '"':
	case 'n':
		return nil, s.literal("null")
	default:
		return nil, s.errorf("want a string")
	}
	start := s.i
	s.i++
	escaped := false
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			if !escaped {
				return s.b[start+1 : s.i-1], nil
			}
			var out string
			if err := json.Unmarshal(s.b[start:s.i], &out); err != nil {
				return nil, s.errorf("bad string: %v", err)
			}
			return []byte(out), nil
		case c == '\\':
			escaped = true
			s.i += 2
		case c < 0x20:
			return nil, s.errorf("control character in a string")
		default:
			s.i++
		}
	}
	return nil, s.errorf("unterminated string")
}

// skipString passes over a string without unescaping it.
func (s *scanner) skipString() error {
	s.i++ // the opening quote
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return nil
		case c == '\\':
			s.i += 2
		case c < 0x20:
			return s.errorf("control character in a string")
		default:
			s.i++
		}
	}
	return s.errorf("unterminated string")
}

// array calls elem for every element of the array at the cursor (null: none).
func (s *scanner) array(elem func() error) error {
	if s.peek() == 'n' {
		return s.literal("null")
	}
	if err := s.expect('['); err != nil {
		return err
	}
	if s.peek() == ']' {
		s.i++
		return nil
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return nil
		default:
			return s.errorf("want ',' or ']'")
		}
	}
}

// rawArray returns the bytes of the array at the cursor (checked), for use as a cache key.
func (s *scanner) rawArray() ([]byte, error) {
	s.ws()
	start := s.i
	err := s.skip()
	return s.b[start:s.i], err
}

func (s *scanner) literal(word string) error {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return s.errorf("want %s", word)
	}
	s.i += len(word)
	return nil
}

// skip passes over any value, checking its structure but not decoding it.
func (s *scanner) skip() error {
	switch c := s.peek(); {
	case c == '"':
		return s.skipString()
	case c == '{':
		return s.object(func([]byte) error { return s.skip() })
	case c == '[':
		return s.array(s.skip)
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number()
	default:
		return s.errorf("unexpected %q", c)
	}
}

func (s *scanner) number() error {
	start := s.i
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c >= '0' && c <= '9', c == '-', c == '+', c == '.', c == 'e', c == 'E':
			s.i++
		default:
			return s.checkNumber(start)
		}
	}
	return s.checkNumber(start)
}

func (s *scanner) checkNumber(start int) error {
	if !json.Valid(s.b[start:s.i]) {
		return s.errorf("bad number")
	}
	return nil
}

// end checks that nothing but space follows the value.
func (s *scanner) end() error {
	if s.peek() != 0 {
		return s.errorf("trailing data")
	}
	return nil
}
