package cmdutil

import (
	"fmt"
	"io"
	"sort"

	"github.com/spf13/pflag"
)

// Deprecated maps the name of each deprecated flag to what to use instead. pflag's own
// deprecation notice goes through cobra to the command's output, standard output, where it
// corrupts -o json; Deprecated hides the flags and writes the notices to standard error.
type Deprecated map[string]string

// Hide hides the deprecated flags of fs from --help and completion.
func (d Deprecated) Hide(fs *pflag.FlagSet) {
	for name := range d {
		_ = fs.MarkHidden(name) // every name is a flag the command defines
	}
}

// Warn writes, for each deprecated flag set on the command line, kubectl's notice to w
// (standard error), in flag order.
func (d Deprecated) Warn(fs *pflag.FlagSet, w io.Writer) {
	names := make([]string, 0, len(d))
	for name := range d {
		if fs.Changed(name) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(w, "Flag --%s has been deprecated, use %s\n", name, d[name])
	}
}
