// Package version describes the build: the release tag and commit `make build`, `make image` and
// the Dockerfile stamp in with -ldflags, falling back to what the Go toolchain recorded.
package version

import (
	"runtime"
	"runtime/debug"
)

// Set with -ldflags "-X github.com/apf-operator/apf-operator/internal/version.gitVersion=..." (see
// the Makefile's LDFLAGS).
var (
	gitVersion = ""
	gitCommit  = ""
	buildDate  = ""
)

// Info is the build's identity, printed by `apf-operator version`.
type Info struct {
	GitVersion string `json:"gitVersion"`
	GitCommit  string `json:"gitCommit"`
	BuildDate  string `json:"buildDate,omitempty"`
	GoVersion  string `json:"goVersion"`
	Platform   string `json:"platform"`
}

// override replaces Get's result when set (Override): golden tests print a fixed build.
var override *Info

// Override makes Get return info until restore is called. It exists for tests, whose output
// must not depend on the toolchain or the commit.
func Override(info Info) (restore func()) {
	prev := override
	override = &info
	return func() { override = prev }
}

// Get returns the build's identity: the stamped values, else the module version and VCS revision
// Go recorded, else "unknown".
func Get() Info {
	if override != nil {
		return *override
	}
	info := Info{GitVersion: gitVersion, GitCommit: gitCommit, BuildDate: buildDate,
		GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if info.GitVersion == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			info.GitVersion = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && info.GitCommit == "" {
				info.GitCommit = s.Value
			}
		}
	}
	if info.GitVersion == "" {
		info.GitVersion = "v0.0.0-unknown"
	}
	if info.GitCommit == "" {
		info.GitCommit = "unknown"
	}
	return info
}

// String is the one-line form: "apf-operator v0.3.0 (commit 1a2b3c4, go1.26.8 linux/amd64)".
func (i Info) String() string {
	return "apf-operator " + i.GitVersion + " (commit " + i.GitCommit + ", " + i.GoVersion + " " + i.Platform + ")"
}
