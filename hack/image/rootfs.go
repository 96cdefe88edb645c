package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Paths and identity inside the image. The Dockerfile and the chart rely on them.
const (
	// BinaryPath is the manager binary and the image's entrypoint.
	BinaryPath = "apf-operator"
	// SBOMPath is the SPDX 2.3 JSON document describing the binary's modules.
	SBOMPath = "sbom/apf-operator.spdx.json"
	// User is the image's user: nonroot, as in distroless.
	User = "65532:65532"
)

// File is one entry of the image's root filesystem. Paths are relative to "/".
type File struct {
	Path string
	Mode fs.FileMode // permission bits plus fs.ModeDir and fs.ModeSticky
	Data []byte
}

// RootFS is the image's root filesystem in two layers: Base, the same on every platform,
// and App, the binary and its SBOM.
type RootFS struct {
	Base, App []File
}

// baseFiles are the few files a static Go binary running as nonroot needs. No CA
// certificates: the operator's only outbound peer is kube-apiserver, which it verifies with
// the service account's ca.crt (or the kubeconfig's CA), never the system roots. No time zone
// data: nothing loads a location. /tmp exists (mode 1777) because controller-runtime's webhook
// server defaults its certificate directory there; the chart mounts an emptyDir over it.
func baseFiles() []File {
	return []File{
		{Path: "etc", Mode: fs.ModeDir | 0o755},
		{Path: "etc/group", Mode: 0o644, Data: []byte("root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n")},
		{Path: "etc/passwd", Mode: 0o644, Data: []byte("root:x:0:0:root:/root:/sbin/nologin\n" +
			"nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n" +
			"nonroot:x:65532:65532:nonroot:/nonexistent:/sbin/nologin\n")},
		{Path: "tmp", Mode: fs.ModeDir | fs.ModeSticky | 0o777},
	}
}

// Files builds the binary for platform, stamped with version and revision, and returns the
// image's root filesystem.
func Files(repo string, platform v1.Platform, version, revision string, created time.Time) (RootFS, error) {
	dir, err := os.MkdirTemp("", "apf-image-")
	if err != nil {
		return RootFS{}, err
	}
	defer os.RemoveAll(dir)
	binary, err := buildBinary(repo, platform, dir, Stamp{Version: version, Revision: revision, Created: created})
	if err != nil {
		return RootFS{}, err
	}
	data, err := os.ReadFile(binary)
	if err != nil {
		return RootFS{}, err
	}
	sbom, err := SBOM(binary, data, version, created)
	if err != nil {
		return RootFS{}, err
	}
	return RootFS{Base: baseFiles(), App: []File{
		{Path: BinaryPath, Mode: 0o755, Data: data},
		{Path: filepath.Dir(SBOMPath), Mode: fs.ModeDir | 0o755},
		{Path: SBOMPath, Mode: 0o644, Data: sbom},
	}}, nil
}

// tarFiles writes files as a tar stream owned by root, every time set to mtime, in the given
// (fixed) order, so that the same files always give the same bytes.
func tarFiles(files []File, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		hdr := &tar.Header{Name: f.Path, Mode: tarMode(f.Mode), ModTime: mtime, Format: tar.FormatPAX,
			Typeflag: tar.TypeReg, Size: int64(len(f.Data))}
		if f.Mode.IsDir() {
			hdr.Name, hdr.Typeflag, hdr.Size = f.Path+"/", tar.TypeDir, 0
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.Data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// tarMode converts Go's file mode to tar's (the sticky bit is c_ISVTX there).
func tarMode(m fs.FileMode) int64 {
	mode := int64(m.Perm())
	if m&fs.ModeSticky != 0 {
		mode |= 0o1000
	}
	return mode
}

// WriteDir writes the root filesystem into dir (for the Dockerfile, which copies it into a
// scratch image), with every time set to mtime.
func WriteDir(dir string, root RootFS, mtime time.Time) error {
	files := append(append([]File{}, root.Base...), root.App...)
	for _, f := range files {
		path := filepath.Join(dir, f.Path)
		var err error
		if f.Mode.IsDir() {
			err = os.MkdirAll(path, 0o755)
		} else {
			err = os.WriteFile(path, f.Data, 0o644)
		}
		if err == nil {
			err = os.Chmod(path, f.Mode&(fs.ModePerm|fs.ModeSticky))
		}
		if err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	// Times last: writing a file changes its directory's time.
	for _, f := range files {
		if err := os.Chtimes(filepath.Join(dir, f.Path), mtime, mtime); err != nil {
			return err
		}
	}
	return nil
}
