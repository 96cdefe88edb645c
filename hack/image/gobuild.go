package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// buildFlags make the binary static (no cgo) and free of local paths (-trimpath); ldflags
// removes the build ID that changes with the toolchain's cache (-buildid=) and strips the
// symbol tables (-s -w). The Dockerfile passes the same flags through the rootfs subcommand.
// ldflags adds the build's identity that `apf-operator version` prints (internal/version):
// the image's version and revision, and SOURCE_DATE_EPOCH as the build date, so that the
// binary, like the rest of the image, is the same for every build of a commit.
var buildFlags = []string{"build", "-trimpath"}

// versionPackage is the package whose variables -X stamps.
const versionPackage = "github.com/apf-operator/apf-operator/internal/version"

// ldflags are the linker flags: stripped, no build ID, and the build's identity stamped.
func ldflags(s Stamp) string {
	return fmt.Sprintf("-s -w -buildid= -X %[1]s.gitVersion=%[2]s -X %[1]s.gitCommit=%[3]s -X %[1]s.buildDate=%[4]s",
		versionPackage, s.Version, s.Revision, s.Created.UTC().Format(time.RFC3339))
}

// Stamp is the identity a build writes into the binary.
type Stamp struct {
	Version  string    // the image's version (its tag)
	Revision string    // the git commit; empty: "unknown" in the binary
	Created  time.Time // SOURCE_DATE_EPOCH
}

// buildBinary cross-compiles the repository's main package for platform into dir.
func buildBinary(repo string, platform v1.Platform, dir string, stamp Stamp) (string, error) {
	out := filepath.Join(dir, "apf-operator-"+platform.OS+"-"+platform.Architecture)
	args := append(append([]string{}, buildFlags...), "-ldflags="+ldflags(stamp), "-o", out, ".")
	cmd := exec.Command("go", args...)
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+platform.OS, "GOARCH="+platform.Architecture)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building apf-operator for %s/%s in %s: %w", platform.OS, platform.Architecture, repo, err)
	}
	return out, nil
}
