package main

import (
	"archive/tar"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// Annotations on the index's descriptor in the layout's index.json that name the image.
const (
	// RefNameAnnotation is the OCI image-layout name (skopeo, crane, the OCI spec).
	RefNameAnnotation = "org.opencontainers.image.ref.name"
	// containerdNameAnnotation is the name containerd's importer (`kind load image-archive`,
	// `ctr images import`) gives the image.
	containerdNameAnnotation = "io.containerd.image.name"
)

// writeArchive writes idx as an OCI image layout in the directory named like out without
// ".oci.tar" or ".tar", then out, a tar of that directory (skopeo's oci-archive:, kind load
// image-archive). `crane push <dir> <ref>` pushes the multi-arch index the directory holds;
// with --index crane would push index.json itself, an index of the index.
func writeArchive(out string, idx v1.ImageIndex, ref string, mtime time.Time) error {
	dir := strings.TrimSuffix(strings.TrimSuffix(out, ".tar"), ".oci")
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("writing the OCI layout %s: %w", dir, err)
	}
	if err := p.AppendIndex(idx, layout.WithAnnotations(map[string]string{
		RefNameAnnotation: ref, containerdNameAnnotation: ref,
	})); err != nil {
		return fmt.Errorf("writing the OCI layout %s: %w", dir, err)
	}
	return tarDir(dir, out, mtime)
}

// tarDir writes the files under dir into the tar archive out, in lexical order, owned by root,
// with the given time: the same layout always gives the same archive.
func tarDir(dir, out string, mtime time.Time) error {
	tmp, err := os.CreateTemp(filepath.Dir(out), ".image-*.tar")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	tw := tar.NewWriter(tmp)
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		return addToTar(tw, dir, path, d, mtime)
	})
	if err == nil {
		err = tw.Close()
	}
	if closeErr := tmp.Close(); err == nil {
		err = closeErr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", out, err)
	}
	return os.Rename(tmp.Name(), out)
}

func addToTar(tw *tar.Writer, dir, path string, d fs.DirEntry, mtime time.Time) error {
	rel, err := filepath.Rel(dir, path)
	if err != nil {
		return err
	}
	hdr := &tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, ModTime: mtime, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
	if d.IsDir() {
		hdr.Name, hdr.Mode, hdr.Typeflag = hdr.Name+"/", 0o755, tar.TypeDir
		return tw.WriteHeader(hdr)
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	hdr.Size = info.Size()
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	_, err = io.Copy(tw, f)
	return err
}
