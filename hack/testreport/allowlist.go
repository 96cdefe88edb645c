package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
)

// skipKey names one test: its package's import path and its full name (Parent/sub for a
// subtest).
type skipKey struct {
	pkg, test string
}

func (k skipKey) String() string { return k.pkg + " " + k.test }

// allowlist maps each test allowed to skip to the reason the allowlist gives.
type allowlist map[skipKey]string

func readAllowlistFile(path string) (allowlist, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAllowlist(f, path)
}

// readAllowlist parses lines "<package> <test> <why...>"; blank lines and lines starting with
// # are comments. An entry without a reason is an error: the file is where the why is kept.
func readAllowlist(r io.Reader, name string) (allowlist, error) {
	allowed := allowlist{}
	scanner := bufio.NewScanner(r)
	for n := 1; scanner.Scan(); n++ {
		line := strings.TrimSpace(scanner.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 3 {
			return nil, fmt.Errorf("%s:%d: want <package> <test> <why>, got %q", name, n, line)
		}
		key := skipKey{pkg: fields[0], test: fields[1]}
		if _, dup := allowed[key]; dup {
			return nil, fmt.Errorf("%s:%d: %s listed twice", name, n, key)
		}
		allowed[key] = strings.Join(fields[2:], " ")
	}
	return allowed, scanner.Err()
}
