package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWriteDirMatchesLayers: the Dockerfile's root filesystem (WriteDir, copied onto scratch)
// has the same paths, modes, contents and times as the image's layers (tarFiles).
func TestWriteDirMatchesLayers(t *testing.T) {
	mtime := time.Unix(1700000000, 0)
	root := RootFS{Base: baseFiles(), App: []File{
		{Path: BinaryPath, Mode: 0o755, Data: []byte("binary")},
		{Path: "sbom", Mode: fs.ModeDir | 0o755},
		{Path: SBOMPath, Mode: 0o644, Data: []byte("{}")},
	}}
	layers := map[string]*tar.Header{}
	contents := map[string]string{}
	for _, files := range [][]File{root.Base, root.App} {
		data, err := tarFiles(files, mtime)
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(bytes.NewReader(data))
		for {
			hdr, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(tr)
			name := strings.TrimSuffix(hdr.Name, "/")
			layers[name], contents[name] = hdr, string(body)
		}
	}
	dir := t.TempDir()
	if err := WriteDir(dir, root, mtime); err != nil {
		t.Fatal(err)
	}
	seen := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		hdr, ok := layers[filepath.ToSlash(rel)]
		if !ok {
			t.Errorf("%s is in the Docker root filesystem but not in the layers", rel)
			return nil
		}
		seen++
		info, err := d.Info()
		if err != nil {
			return err
		}
		if got, want := info.Mode(), hdr.FileInfo().Mode(); got != want {
			t.Errorf("%s: mode %v in the directory, %v in the layer", rel, got, want)
		}
		if !info.ModTime().Equal(mtime) || !hdr.ModTime.Equal(mtime) {
			t.Errorf("%s: times %s and %s; want %s", rel, info.ModTime(), hdr.ModTime, mtime)
		}
		if !d.IsDir() {
			data, _ := os.ReadFile(path)
			if string(data) != contents[hdr.Name] {
				t.Errorf("%s: contents differ", rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen != len(layers) {
		t.Errorf("the directory holds %d of the layers' %d entries", seen, len(layers))
	}
	if hdr := layers["tmp"]; hdr == nil || hdr.Mode != 0o1777 || hdr.Uid != 0 {
		t.Errorf("/tmp in the layer: %+v; want mode 1777 owned by root", hdr)
	}
}

func TestBadInputIsRejected(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"archive", "--version=v1", "--source-date-epoch=1", "--ref=x", "--out=x.tar", "--platforms=linux/s390x"}, "", "want linux/<arch> with arch one of amd64, arm64"},
		{[]string{"archive", "--version=v1", "--source-date-epoch=1", "--ref=x", "--out=x.tar", "--platforms=linux/amd64,linux/amd64"}, "", "listed twice"},
		{[]string{"archive", "--version=v1", "--source-date-epoch=1", "--ref=x", "--out=x.zip"}, "", "must end in .tar"},
		{[]string{"archive", "--version=v1", "--out=x.tar", "--ref=x"}, "yesterday", `$SOURCE_DATE_EPOCH="yesterday": want a non-negative integer`},
		{[]string{"rootfs", "--source-date-epoch=1", "--out=x"}, "", "--version is required"},
		{[]string{"push"}, "", `unknown subcommand "push"`},
	} {
		t.Setenv("SOURCE_DATE_EPOCH", c.env)
		if c.env == "" {
			os.Unsetenv("SOURCE_DATE_EPOCH")
		}
		if err := run(c.args); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("run(%q) = %v; want an error containing %q", c.args, err, c.want)
		}
	}
}
