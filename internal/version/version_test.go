package version

import (
	"runtime"
	"strings"
	"testing"
)

func TestGetPrefersTheStampedValues(t *testing.T) {
	defer func(v, c, d string) { gitVersion, gitCommit, buildDate = v, c, d }(gitVersion, gitCommit, buildDate)
	gitVersion, gitCommit, buildDate = "v1.2.3", "abc", "2026-01-02T03:04:05Z"
	got := Get()
	if got.GitVersion != "v1.2.3" || got.GitCommit != "abc" || got.BuildDate != "2026-01-02T03:04:05Z" ||
		got.GoVersion != runtime.Version() || got.Platform != runtime.GOOS+"/"+runtime.GOARCH {
		t.Fatalf("Get() = %+v", got)
	}
	if s := got.String(); s != "apf-operator v1.2.3 (commit abc, "+runtime.Version()+" "+got.Platform+")" {
		t.Fatalf("String() = %q", s)
	}
}

func TestGetWithoutStampNeverSaysDevel(t *testing.T) {
	defer func(v, c string) { gitVersion, gitCommit = v, c }(gitVersion, gitCommit)
	gitVersion, gitCommit = "", ""
	got := Get()
	if got.GitVersion == "" || strings.Contains(got.GitVersion, "devel") || got.GitCommit == "" {
		t.Fatalf("Get() without -ldflags = %+v; want a version (the module's or v0.0.0-unknown) and a commit", got)
	}
}

func TestOverrideRestores(t *testing.T) {
	before := Get()
	restore := Override(Info{GitVersion: "v9.9.9"})
	if Get().GitVersion != "v9.9.9" {
		t.Fatalf("Override not applied: %+v", Get())
	}
	restore()
	if Get() != before {
		t.Fatalf("after restore Get() = %+v, want %+v", Get(), before)
	}
}
