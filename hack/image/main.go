// Command image builds the apf-operator container image without a Docker engine: it
// cross-compiles the static manager binary for each platform, lays it out with a minimal
// non-root root filesystem and an SPDX SBOM, and writes a reproducible multi-arch OCI image
// layout (a directory and a tar archive of it) with go-containerregistry.
//
// `make image` runs it; the Dockerfile runs its rootfs subcommand, so both give the same files.
//
//	image archive --repo . --out bin/image/apf-operator-v0.1.0.oci.tar --ref ghcr.io/apf-operator/apf-operator:v0.1.0 ...
//	image rootfs --repo . --platform linux/arm64 --out /rootfs
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: image archive|rootfs [flags]")
	}
	switch args[0] {
	case "archive":
		return runArchive(args[1:])
	case "rootfs":
		return runRootFS(args[1:])
	default:
		return fmt.Errorf("unknown subcommand %q: want archive or rootfs", args[0])
	}
}

// commonFlags are the flags both subcommands take.
type commonFlags struct {
	repo, version string
	epoch         int64
}

func (c *commonFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.repo, "repo", ".", "the repository's top directory (the main module)")
	fs.StringVar(&c.version, "version", "", "the operator's version (the image tag and the SBOM's version)")
	fs.Int64Var(&c.epoch, "source-date-epoch", -1, "time of every file and of the image, in seconds since 1970 (default: $SOURCE_DATE_EPOCH)")
}

// resolve fills what the flags left to the environment and checks the required values.
func (c *commonFlags) resolve() error {
	if c.version == "" {
		return fmt.Errorf("--version is required")
	}
	if c.epoch >= 0 {
		return nil
	}
	env, ok := os.LookupEnv("SOURCE_DATE_EPOCH")
	if !ok {
		return fmt.Errorf("--source-date-epoch or $SOURCE_DATE_EPOCH is required (for example the last commit's time: git log -1 --format=%%ct)")
	}
	n, err := strconv.ParseInt(env, 10, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("$SOURCE_DATE_EPOCH=%q: want a non-negative integer (seconds since 1970)", env)
	}
	c.epoch = n
	return nil
}

func (c *commonFlags) created() time.Time { return time.Unix(c.epoch, 0).UTC() }

func runArchive(args []string) error {
	fs := flag.NewFlagSet("archive", flag.ContinueOnError)
	var c commonFlags
	c.register(fs)
	var opts Options
	var platforms string
	fs.StringVar(&opts.Ref, "ref", "", "the image reference written into the layout's index.json (org.opencontainers.image.ref.name)")
	fs.StringVar(&opts.Out, "out", "", "the OCI archive to write (a tar of the layout); the layout directory is written beside it, without .oci.tar")
	fs.StringVar(&platforms, "platforms", "linux/amd64,linux/arm64", "comma-separated os/arch list")
	fs.StringVar(&opts.Labels.Source, "source", "https://github.com/apf-operator/apf-operator", "org.opencontainers.image.source")
	fs.StringVar(&opts.Labels.Revision, "revision", "", "org.opencontainers.image.revision (the git commit)")
	fs.StringVar(&opts.Labels.Licenses, "licenses", "Apache-2.0", "org.opencontainers.image.licenses (SPDX expression)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := c.resolve(); err != nil {
		return err
	}
	if opts.Ref == "" || opts.Out == "" {
		return fmt.Errorf("--ref and --out are required")
	}
	if !strings.HasSuffix(opts.Out, ".tar") {
		return fmt.Errorf("--out %q: the archive's name must end in .tar", opts.Out)
	}
	var err error
	if opts.Platforms, err = parsePlatforms(platforms); err != nil {
		return err
	}
	opts.Repo, opts.Labels.Version, opts.Created = c.repo, c.version, c.created()
	digest, err := Build(opts)
	if err != nil {
		return err
	}
	fmt.Printf("wrote %s (%s, index %s)\n", opts.Out, opts.Ref, digest)
	return nil
}

func runRootFS(args []string) error {
	fs := flag.NewFlagSet("rootfs", flag.ContinueOnError)
	var c commonFlags
	c.register(fs)
	var platform, out, revision string
	fs.StringVar(&platform, "platform", "linux/amd64", "os/arch of the binary")
	fs.StringVar(&revision, "revision", "", "the git commit, stamped into the binary")
	fs.StringVar(&out, "out", "", "directory to write the root filesystem into (created)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := c.resolve(); err != nil {
		return err
	}
	if out == "" {
		return fmt.Errorf("--out is required")
	}
	p, err := parsePlatforms(platform)
	if err != nil {
		return err
	}
	files, err := Files(c.repo, p[0], c.version, revision, c.created())
	if err != nil {
		return err
	}
	return WriteDir(out, files, c.created())
}
