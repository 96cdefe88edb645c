package main

import (
	"fmt"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// supportedArchs are the architectures the image is built for; the binary is pure Go, so any
// GOARCH would do, but these are the ones the project tests and documents.
var supportedArchs = []string{"amd64", "arm64"}

// parsePlatforms parses a comma-separated list of linux/<arch>.
func parsePlatforms(list string) ([]v1.Platform, error) {
	var out []v1.Platform
	for _, s := range strings.Split(list, ",") {
		os, arch, ok := strings.Cut(strings.TrimSpace(s), "/")
		if !ok || os != "linux" || !slices.Contains(supportedArchs, arch) {
			return nil, fmt.Errorf("platform %q: want linux/<arch> with arch one of %s", s, strings.Join(supportedArchs, ", "))
		}
		p := v1.Platform{OS: os, Architecture: arch}
		if slices.ContainsFunc(out, p.Equals) {
			return nil, fmt.Errorf("platform %q is listed twice", s)
		}
		out = append(out, p)
	}
	return out, nil
}
