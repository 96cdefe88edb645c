package manifest

import (
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// goTypeError matches encoding/json's type error, to say it without Go's struct names.
var goTypeError = regexp.MustCompile(`cannot unmarshal (.+) into Go struct field [^.\s]+\.(\S+) of type (\S+)`)

// DecodeError turns a decoding error into a field error: a value of the wrong type on its
// field, said without Go's type names (for example "a string cannot be decoded as int32").
func DecodeError(err error) *field.Error {
	m := goTypeError.FindStringSubmatch(err.Error())
	if m == nil {
		return field.Invalid(nil, nil, "cannot decode: "+strings.TrimPrefix(err.Error(), "json: "))
	}
	return &field.Error{Type: field.ErrorTypeTypeInvalid, Field: m[2], BadValue: field.OmitValueType{},
		Detail: "a " + m[1] + " cannot be decoded as " + m[3]}
}
