package validation

import "regexp"

// compileFull compiles re as RE2 anchored at both ends, the way patterns and transformations
// are matched against a whole attribute value. The syntax is checked on re itself first so that
// the error message quotes what the user wrote.
func compileFull(re string) (*regexp.Regexp, error) {
	if _, err := regexp.Compile(re); err != nil {
		return nil, err
	}
	return regexp.Compile(`^(?:` + re + `)$`)
}

// capturingGroups returns the number of capturing groups of a valid regex.
func capturingGroups(re string) int {
	r, err := regexp.Compile(re)
	if err != nil {
		return 0
	}
	return r.NumSubexp()
}
