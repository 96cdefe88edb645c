package main

import (
	"bytes"
	"fmt"
	"io"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Labels are the org.opencontainers.image.* values that vary per build.
type Labels struct {
	Source, Version, Revision, Licenses string
}

// Options describe one `make image` build.
type Options struct {
	Repo      string        // the repository (main module) to build
	Out       string        // the archive to write
	Ref       string        // the image reference for index.json
	Platforms []v1.Platform // one image per platform, in this order
	Labels    Labels
	Created   time.Time // every time in the image: SOURCE_DATE_EPOCH
}

// labels returns the image's org.opencontainers.image.* labels (also the index's annotations).
func (o Options) labels() map[string]string {
	l := map[string]string{
		"org.opencontainers.image.title":       "apf-operator",
		"org.opencontainers.image.description": "Kubernetes operator for API Priority and Fairness configuration",
		"org.opencontainers.image.source":      o.Labels.Source,
		"org.opencontainers.image.version":     o.Labels.Version,
		"org.opencontainers.image.licenses":    o.Labels.Licenses,
		"org.opencontainers.image.created":     o.Created.UTC().Format(time.RFC3339),
	}
	if o.Labels.Revision != "" {
		l["org.opencontainers.image.revision"] = o.Labels.Revision
	}
	return l
}

// Build builds one image per platform, puts them in an OCI index and writes the layout and
// its archive. It returns the index's digest.
func Build(o Options) (v1.Hash, error) {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range o.Platforms {
		root, err := Files(o.Repo, p, o.Labels.Version, o.Labels.Revision, o.Created)
		if err != nil {
			return v1.Hash{}, err
		}
		img, err := platformImage(o, p, root)
		if err != nil {
			return v1.Hash{}, fmt.Errorf("%s/%s: %w", p.OS, p.Architecture, err)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: p.OS, Architecture: p.Architecture}}})
	}
	idx = mutate.Annotations(idx, o.labels()).(v1.ImageIndex)
	if err := writeArchive(o.Out, idx, o.Ref, o.Created); err != nil {
		return v1.Hash{}, err
	}
	return idx.Digest()
}

// platformImage assembles the image for one platform: two layers, the config (entrypoint,
// user, labels) and every time set to o.Created.
func platformImage(o Options, p v1.Platform, root RootFS) (v1.Image, error) {
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	created := v1.Time{Time: o.Created}
	for _, l := range []struct {
		files []File
		what  string
	}{{root.Base, "base files: /etc/passwd, /etc/group (nonroot 65532), /tmp"}, {root.App, "apf-operator and its SBOM"}} {
		layer, err := layerOf(l.files, o.Created)
		if err != nil {
			return nil, err
		}
		img, err = mutate.Append(img, mutate.Addendum{Layer: layer, MediaType: types.OCILayer,
			History: v1.History{Created: created, CreatedBy: "hack/image: " + l.what, Comment: "apf-operator " + o.Labels.Version}})
		if err != nil {
			return nil, err
		}
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture, cfg.Created = p.OS, p.Architecture, created
	cfg.Config = v1.Config{
		Entrypoint: []string{"/" + BinaryPath},
		User:       User,
		WorkingDir: "/",
		Env:        []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
		Labels:     o.labels(),
	}
	return mutate.ConfigFile(img, cfg)
}

// layerOf makes a gzip-compressed OCI layer of files (gzip without a timestamp: reproducible).
func layerOf(files []File, mtime time.Time) (v1.Layer, error) {
	data, err := tarFiles(files, mtime)
	if err != nil {
		return nil, err
	}
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil },
		tarball.WithMediaType(types.OCILayer))
}
