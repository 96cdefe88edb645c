package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// buildFlags make the binary static (no cgo), free of local paths (-trimpath) and of the build
// ID that changes with the toolchain's cache (-buildid=), and strip its symbol tables (-s -w).
// The Dockerfile passes the same flags through the rootfs subcommand.
var buildFlags = []string{"build", "-trimpath", "-ldflags=-s -w -buildid="}

// buildBinary cross-compiles the repository's main package for platform into dir.
func buildBinary(repo string, platform v1.Platform, dir string) (string, error) {
	out := filepath.Join(dir, "apf-operator-"+platform.OS+"-"+platform.Architecture)
	cmd := exec.Command("go", append(append([]string{}, buildFlags...), "-o", out, ".")...)
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+platform.OS, "GOARCH="+platform.Architecture)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building apf-operator for %s/%s in %s: %w", platform.OS, platform.Architecture, repo, err)
	}
	return out, nil
}
