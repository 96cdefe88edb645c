package audit

import (
	"encoding/json"
	"fmt"
)

// interner returns one shared string per distinct value, so that a million events from a few
// hundred users and resources hold a few hundred strings.
type interner struct {
	strs       map[string]string
	groupLists map[string][]string // by the raw JSON array
}

// maxInterned bounds each table: past it, values are copied instead (a log with millions of
// distinct names must not grow the table without bound).
const maxInterned = 1 << 20

func newInterner() interner {
	return interner{strs: map[string]string{}, groupLists: map[string][]string{}}
}

func (in *interner) str(b []byte) string {
	if s, ok := in.strs[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(in.strs) < maxInterned {
		in.strs[s] = s
	}
	return s
}

// groups decodes a raw JSON array of strings (its syntax already checked by the scanner);
// nil for none.
func (in *interner) groups(raw []byte) ([]string, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	if g, ok := in.groupLists[string(raw)]; ok {
		return g, nil
	}
	var g []string
	if err := json.Unmarshal(raw, &g); err != nil {
		return nil, fmt.Errorf("groups: want a list of strings: %w", err)
	}
	for i := range g {
		g[i] = in.str([]byte(g[i]))
	}
	if len(in.groupLists) < maxInterned {
		in.groupLists[string(raw)] = g
	}
	return g, nil
}
