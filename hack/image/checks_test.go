package main

import (
	"bytes"
	"debug/buildinfo"
	"encoding/json"
	"io"
	"io/fs"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	cranecmd "github.com/google/go-containerregistry/cmd/crane/cmd"
	"github.com/google/go-containerregistry/pkg/crane"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	spdxjson "github.com/spdx/tools-golang/json"
)

// checkCranePush runs the documented `crane push <layout directory> <ref>` (crane's own
// command code) against an in-memory registry: the tag must name the multi-arch index itself.
func checkCranePush(t *testing.T, layoutDir string, idx v1.ImageIndex) {
	t.Helper()
	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer reg.Close()
	ref := strings.TrimPrefix(reg.URL, "http://") + "/you/apf-operator:v0.1.0"
	push := cranecmd.NewCmdPush(&[]crane.Option{})
	var out bytes.Buffer
	push.SetArgs([]string{layoutDir, ref})
	push.SetOut(&out)
	push.SetErr(&out)
	if err := push.Execute(); err != nil {
		t.Fatalf("crane push %s %s: %v\n%s", layoutDir, ref, err, out.String())
	}
	pushed, err := crane.Digest(ref)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := idx.Digest(); pushed != want.String() {
		t.Errorf("crane push tagged %s; want the multi-arch index %s", pushed, want)
	}
}

// checkRefName: index.json names the image with the reference the chart pulls by default.
func checkRefName(t *testing.T, dir, ref string) {
	t.Helper()
	outer, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := outer.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Manifests[0].Annotations[RefNameAnnotation]; got != ref {
		t.Errorf("index.json names the image %q; the chart's default image is %q", got, ref)
	}
}

// checkConfig: entrypoint, user, platform and labels as the Dockerfile and the chart expect.
func checkConfig(t *testing.T, platform string, img v1.Image) {
	t.Helper()
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.OS + "/" + cfg.Architecture; got != platform {
		t.Errorf("%s: config says platform %s", platform, got)
	}
	if !slices.Equal(cfg.Config.Entrypoint, []string{"/apf-operator"}) || cfg.Config.User != "65532:65532" {
		t.Errorf("%s: entrypoint %q, user %q; want [/apf-operator] and 65532:65532", platform, cfg.Config.Entrypoint, cfg.Config.User)
	}
	created := time.Unix(lastCommitTime(t), 0).UTC()
	want := map[string]string{
		"org.opencontainers.image.title":    "apf-operator",
		"org.opencontainers.image.version":  appVersion(t),
		"org.opencontainers.image.revision": git(t, "rev-parse", "HEAD"),
		"org.opencontainers.image.created":  created.Format(time.RFC3339),
		"org.opencontainers.image.source":   "https://github.com/apf-operator/apf-operator",
		"org.opencontainers.image.licenses": "Apache-2.0",
	}
	for k, v := range want {
		if got := cfg.Config.Labels[k]; got != v {
			t.Errorf("%s: label %s = %q; want %q", platform, k, got, v)
		}
	}
	if cfg.Config.Labels["org.opencontainers.image.description"] == "" {
		t.Errorf("%s: no org.opencontainers.image.description label", platform)
	}
	if !cfg.Created.Equal(created) {
		t.Errorf("%s: image created %s; want the last commit's time %s", platform, cfg.Created.Time, created)
	}
}

// checkRootFS: nonroot in /etc/passwd and /etc/group, /tmp world-writable and sticky, every
// time the last commit's.
func checkRootFS(t *testing.T, root string) {
	t.Helper()
	passwd, _ := os.ReadFile(filepath.Join(root, "etc", "passwd"))
	group, _ := os.ReadFile(filepath.Join(root, "etc", "group"))
	if !strings.Contains(string(passwd), "\nnonroot:x:65532:65532:") || !strings.Contains(string(group), "\nnonroot:x:65532:") {
		t.Errorf("no nonroot (65532) user and group:\n%s\n%s", passwd, group)
	}
	if info, err := os.Stat(filepath.Join(root, "tmp")); err != nil || info.Mode()&fs.ModeSticky == 0 || info.Mode().Perm() != 0o777 {
		t.Errorf("/tmp: %v, %v; want a directory with mode 1777", info, err)
	}
}

// checkHelp runs the image's binary: it must be static (it runs outside its image) and print
// its commands.
func checkHelp(t *testing.T, binary string) {
	t.Helper()
	out, err := exec.Command(binary, "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("/apf-operator --help: %v\n%s", err, out)
	}
	for _, cmd := range []string{"manager", "validate", "explain", "import", "prune-native"} {
		if !strings.Contains(string(out), "\n  "+cmd) {
			t.Errorf("/apf-operator --help does not list %q:\n%s", cmd, out)
		}
	}
	info, err := buildinfo.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"CGO_ENABLED=0", "-trimpath=true", "GOARCH=amd64"} {
		k, v, _ := strings.Cut(want, "=")
		if setting(info, k) != v {
			t.Errorf("the binary was built without %s (build settings %v)", want, info.Settings)
		}
	}
}

// checkVersion: `apf-operator version -o json` of the image's binary prints the image's version,
// the commit and the last commit's time (SOURCE_DATE_EPOCH) as the build date.
func checkVersion(t *testing.T, binary string) {
	t.Helper()
	out, err := exec.Command(binary, "version", "-o", "json").Output()
	if err != nil {
		t.Fatalf("/apf-operator version -o json: %v\n%s", err, out)
	}
	var got struct{ GitVersion, GitCommit, BuildDate string }
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("/apf-operator version -o json: %v\n%s", err, out)
	}
	commit := gitOutput(t, "rev-parse", "HEAD")
	epoch, err := strconv.ParseInt(gitOutput(t, "log", "-1", "--format=%ct"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	date := time.Unix(epoch, 0).UTC().Format(time.RFC3339)
	if got.GitVersion != appVersion(t) || got.GitCommit != commit || got.BuildDate != date {
		t.Errorf("the image's binary says %+v; want gitVersion %s, gitCommit %s, buildDate %s", got, appVersion(t), commit, date)
	}
}

// gitOutput runs git in the repository and returns its trimmed output.
func gitOutput(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", repo}, args...)...).Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

// checkSBOM: the SPDX document lists every module linked into the binary, at its version.
func checkSBOM(t *testing.T, root string) {
	t.Helper()
	f, err := os.Open(filepath.Join(root, SBOMPath))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := spdxjson.Read(f)
	if err != nil {
		t.Fatalf("the SBOM is not SPDX JSON: %v", err)
	}
	if doc.SPDXVersion != "SPDX-2.3" {
		t.Errorf("SBOM version %q; want SPDX-2.3", doc.SPDXVersion)
	}
	listed := map[string]string{}
	for _, p := range doc.Packages {
		listed[p.PackageName] = p.PackageVersion
	}
	info, err := buildinfo.ReadFile(filepath.Join(root, BinaryPath))
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Deps) < 20 {
		t.Fatalf("the binary links only %d modules; expected the operator's dependencies", len(info.Deps))
	}
	for _, dep := range info.Deps {
		if dep.Replace != nil {
			dep = dep.Replace
		}
		if listed[dep.Path] != dep.Version {
			t.Errorf("the SBOM lists %s at %q; the binary links %s", dep.Path, listed[dep.Path], dep.Version)
		}
	}
	if listed["stdlib"] != info.GoVersion || listed[info.Main.Path] != appVersion(t) {
		t.Errorf("the SBOM lists stdlib %q and %s %q; want %s and %s", listed["stdlib"], info.Main.Path, listed[info.Main.Path], info.GoVersion, appVersion(t))
	}
}
