package main

import (
	"bytes"
	"crypto/sha1" //nolint:gosec // SPDX 2.3 requires a SHA1 checksum beside the SHA256 one.
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"regexp"
	"runtime/debug"
	"strings"
	"time"

	spdxjson "github.com/spdx/tools-golang/json"
	"github.com/spdx/tools-golang/spdx/v2/common"
	spdx "github.com/spdx/tools-golang/spdx/v2/v2_3"
)

// SBOM returns an SPDX 2.3 JSON document describing the Go binary at path (whose bytes are
// data): the main module, the Go standard library of the toolchain that built it, and every
// module linked into it with its version and go.sum hash, as debug/buildinfo reads them from
// the binary itself (so it lists what was linked, not what go.mod mentions).
func SBOM(path string, data []byte, version string, created time.Time) ([]byte, error) {
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the module list of %s: %w", path, err)
	}
	main := mainPackage(info, version, data)
	doc := &spdx.Document{
		SPDXVersion:    spdx.Version,
		DataLicense:    spdx.DataLicense,
		SPDXIdentifier: "DOCUMENT",
		DocumentName:   "apf-operator-" + version + "-" + setting(info, "GOOS") + "-" + setting(info, "GOARCH"),
		// Unique per binary, and still reproducible: derived from the binary's own hash.
		DocumentNamespace: "https://github.com/apf-operator/apf-operator/spdx/" + version + "/" + sha256Hex(data),
		CreationInfo: &spdx.CreationInfo{
			Creators: []common.Creator{{CreatorType: "Tool", Creator: "apf-operator-hack-image"}},
			Created:  created.UTC().Format(time.RFC3339),
		},
		Packages: []*spdx.Package{main, stdlibPackage(info)},
		Relationships: []*spdx.Relationship{
			relationship("DOCUMENT", main.PackageSPDXIdentifier, "DESCRIBES"),
			relationship(main.PackageSPDXIdentifier, "Package-stdlib", "DEPENDS_ON"),
		},
	}
	for _, dep := range info.Deps {
		p := modulePackage(dep)
		doc.Packages = append(doc.Packages, p)
		doc.Relationships = append(doc.Relationships, relationship(main.PackageSPDXIdentifier, p.PackageSPDXIdentifier, "DEPENDS_ON"))
	}
	var buf bytes.Buffer
	if err := spdxjson.Write(doc, &buf, spdxjson.Indent("  ")); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// mainPackage describes the binary: the main module at the operator's version, with the
// binary's checksums and the commit it was built from.
func mainPackage(info *buildinfo.BuildInfo, version string, data []byte) *spdx.Package {
	sha1sum := sha1.Sum(data) //nolint:gosec // required by SPDX, not used for security
	p := goPackage(info.Main.Path, version, "")
	p.PackageFileName = "/" + BinaryPath
	p.PackageChecksums = append([]common.Checksum{
		{Algorithm: common.SHA1, Value: hex.EncodeToString(sha1sum[:])},
		{Algorithm: common.SHA256, Value: sha256Hex(data)},
	}, p.PackageChecksums...)
	p.PrimaryPackagePurpose = "APPLICATION"
	if rev := setting(info, "vcs.revision"); rev != "" {
		p.PackageSourceInfo = "built from commit " + rev + modifiedNote(info)
	}
	return p
}

func modifiedNote(info *buildinfo.BuildInfo) string {
	if setting(info, "vcs.modified") == "true" {
		return " with uncommitted changes"
	}
	return ""
}

// stdlibPackage is the Go standard library, as vulnerability scanners expect it
// (pkg:golang/stdlib@<go version>).
func stdlibPackage(info *buildinfo.BuildInfo) *spdx.Package {
	p := goPackage("stdlib", info.GoVersion, "")
	p.PackageSPDXIdentifier = "Package-stdlib"
	return p
}

// modulePackage describes one linked module; a replaced module is described by its replacement.
func modulePackage(dep *debug.Module) *spdx.Package {
	if dep.Replace != nil {
		p := modulePackage(dep.Replace)
		p.PackageComment = "replaces " + dep.Path + "@" + dep.Version
		return p
	}
	return goPackage(dep.Path, dep.Version, dep.Sum)
}

// goPackage is an SPDX package for a Go module: its purl, and its go.sum hash as a SHA256
// checksum (h1: is base64 SHA-256 of the module's file tree) with the original in a comment.
func goPackage(path, version, sum string) *spdx.Package {
	p := &spdx.Package{
		PackageName:             path,
		PackageSPDXIdentifier:   common.ElementID("Package-" + elementID(path)),
		PackageVersion:          version,
		PackageDownloadLocation: "NOASSERTION",
		FilesAnalyzed:           false,
		PackageExternalReferences: []*spdx.PackageExternalReference{{
			Category: "PACKAGE-MANAGER", RefType: "purl", Locator: "pkg:golang/" + path + "@" + version,
		}},
	}
	if h, ok := strings.CutPrefix(sum, "h1:"); ok {
		if raw, err := base64.StdEncoding.DecodeString(h); err == nil {
			p.PackageChecksums = []common.Checksum{{Algorithm: common.SHA256, Value: hex.EncodeToString(raw)}}
			p.PackageComment = "go.sum " + sum
		}
	}
	return p
}

var notIDChars = regexp.MustCompile(`[^A-Za-z0-9.-]+`)

// elementID turns a module path into the characters an SPDX identifier allows.
func elementID(path string) string { return notIDChars.ReplaceAllString(path, "-") }

func relationship(a, b common.ElementID, kind string) *spdx.Relationship {
	return &spdx.Relationship{RefA: common.MakeDocElementID("", string(a)), RefB: common.MakeDocElementID("", string(b)), Relationship: kind}
}

func setting(info *buildinfo.BuildInfo, key string) string {
	for _, s := range info.Settings {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}

func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
