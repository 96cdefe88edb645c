package main

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// repo is the repository's top directory (this module lives in hack/image).
const repo = "../.."

// TestMakeImage runs `make image` twice, as a user would, and checks the archive: an index of
// testPlatforms named with the chart's default image reference, the config (entrypoint, user, labels),
// the amd64 root filesystem (the binary runs; nonroot; times from SOURCE_DATE_EPOCH), the
// SBOM against the binary's own module list, and the same digest from both builds.
func TestMakeImage(t *testing.T) {
	dir := t.TempDir()
	first, second := filepath.Join(dir, "a", "image.oci.tar"), filepath.Join(dir, "b", "image.oci.tar")
	makeImage(t, first)
	makeImage(t, second)
	if a, b := fileSHA256(t, first), fileSHA256(t, second); a != b {
		t.Errorf("two builds of the same commit gave different archives: sha256 %s and %s", a, b)
	}

	idx := openArchive(t, first, filepath.Join(dir, "extracted"))
	ref := chartImage(t)
	images := imagesByPlatform(t, idx)
	if got, want := slices.Sorted(maps.Keys(images)), testPlatforms(); !slices.Equal(got, want) {
		t.Fatalf("index holds platforms %v; want %v", got, want)
	}
	for platform, img := range images {
		checkConfig(t, platform, img)
	}
	root := filepath.Join(dir, "rootfs")
	amd64, ok := images["linux/amd64"]
	if !ok {
		t.Fatalf("the index has no linux/amd64 image, which the root filesystem checks run: keep it in IMAGE_TEST_PLATFORMS")
	}
	extract(t, amd64, root)
	checkRootFS(t, root)
	checkHelp(t, filepath.Join(root, BinaryPath))
	checkVersion(t, filepath.Join(root, BinaryPath))
	checkSBOM(t, root)
	checkRefName(t, filepath.Join(dir, "extracted"), ref)
	checkCranePush(t, filepath.Join(dir, "a", "image"), idx)
}

// testPlatforms are the platforms the test asks `make image` for, sorted: those in
// $IMAGE_TEST_PLATFORMS (comma-separated; `make test` passes linux/amd64 alone, since each more
// architecture is a whole cross-compile), else the Makefile's default, linux/amd64 and linux/arm64.
func testPlatforms() []string {
	if list := os.Getenv("IMAGE_TEST_PLATFORMS"); list != "" {
		return slices.Sorted(slices.Values(strings.Split(list, ",")))
	}
	return []string{"linux/amd64", "linux/arm64"}
}

// makeImage runs `make image` for testPlatforms, writing the archive to out.
func makeImage(t *testing.T, out string) {
	t.Helper()
	cmd := exec.Command("make", "--no-print-directory", "image", "IMAGE_ARCHIVE="+out,
		"IMAGE_PLATFORMS="+strings.Join(testPlatforms(), ","))
	cmd.Dir = repo
	// The Makefile's defaults, not the caller's: the chart's version, the last commit's time.
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.Contains([]string{"SOURCE_DATE_EPOCH", "VERSION", "IMG", "IMAGE_PLATFORMS", "MAKEFLAGS"}, name)
	})
	if output, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make image: %v\n%s", err, output)
	}
}

func fileSHA256(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// openArchive unpacks the archive (a tar of an OCI layout) into dir and opens its index.
func openArchive(t *testing.T, archive, dir string) v1.ImageIndex {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	untar(t, f, dir)
	outer, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatalf("the archive is not an OCI image layout: %v", err)
	}
	m, err := outer.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 1 {
		t.Fatalf("index.json lists %d entries; want one multi-arch index", len(m.Manifests))
	}
	idx, err := outer.ImageIndex(m.Manifests[0].Digest)
	if err != nil {
		t.Fatalf("index.json's entry is not an image index: %v", err)
	}
	return idx
}

// chartImage renders the chart with its default values (helm template) and returns the
// Deployment's image.
func chartImage(t *testing.T) string {
	t.Helper()
	helms, _ := filepath.Glob(filepath.Join(repo, "bin", "helm-v*"))
	if len(helms) == 0 {
		t.Fatal("bin/helm-<version> not found: run `make envtest` (it builds the pinned tools)")
	}
	out, err := exec.Command(helms[len(helms)-1], "template", "apf-operator", filepath.Join(repo, "charts", "apf-operator"),
		"--show-only", "templates/deployment.yaml").Output()
	if err != nil {
		t.Fatalf("helm template: %v", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if ref, ok := strings.CutPrefix(strings.TrimSpace(line), "image: "); ok {
			return strings.Trim(ref, `"`)
		}
	}
	t.Fatalf("the chart's Deployment has no image:\n%s", out)
	return ""
}

func imagesByPlatform(t *testing.T, idx v1.ImageIndex) map[string]v1.Image {
	t.Helper()
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	images := map[string]v1.Image{}
	for _, d := range m.Manifests {
		if d.Platform == nil {
			t.Fatalf("index entry %s has no platform", d.Digest)
		}
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		images[d.Platform.OS+"/"+d.Platform.Architecture] = img
	}
	return images
}

// extract writes the image's flattened filesystem into dir.
func extract(t *testing.T, img v1.Image, dir string) {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	untar(t, rc, dir)
}

// untar unpacks a tar stream into dir (regular files and directories, with their modes).
func untar(t *testing.T, r io.Reader, dir string) {
	t.Helper()
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, filepath.FromSlash(hdr.Name))
		if !strings.HasPrefix(path, filepath.Clean(dir)+string(filepath.Separator)) {
			t.Fatalf("tar entry %q leaves the directory", hdr.Name)
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(path, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, hdr.FileInfo().Mode()&(fs.ModePerm|fs.ModeSticky)); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			data, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, data, hdr.FileInfo().Mode().Perm()); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("unexpected tar entry %q of type %c", hdr.Name, hdr.Typeflag)
		}
		if !hdr.ModTime.Equal(time.Unix(lastCommitTime(t), 0)) {
			t.Errorf("tar entry %s has time %s; want the last commit's time", hdr.Name, hdr.ModTime.UTC())
		}
	}
}

func git(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", repo}, args...)...).Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

func lastCommitTime(t *testing.T) int64 {
	t.Helper()
	n, err := strconv.ParseInt(git(t, "log", "-1", "--format=%ct"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// appVersion reads the chart's appVersion, the image's version.
func appVersion(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repo, "charts", "apf-operator", "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "appVersion:"); ok {
			return strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	t.Fatal("Chart.yaml has no appVersion")
	return ""
}
