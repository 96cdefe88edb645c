package harness

import "strings"

// FenceInfo splits a Markdown code fence's info string ("sh run=offline") into the language
// and its key=value words (the test/docs and test/troubleshooting conventions).
func FenceInfo(info string) (string, map[string]string) {
	words := strings.Fields(info)
	attrs := map[string]string{}
	if len(words) == 0 {
		return "", attrs
	}
	for _, w := range words[1:] {
		if k, v, ok := strings.Cut(w, "="); ok {
			attrs[k] = v
		}
	}
	return words[0], attrs
}
