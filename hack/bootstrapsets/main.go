// Command bootstrapsets regenerates internal/nativeview/bootstrapset/sets: kube-apiserver's
// mandatory and suggested flow control objects of each supported minor version, as the
// package k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap of that version creates them.
//
// For each version it writes a throwaway module that requires that k8s.io/apiserver (through
// the Go module proxy, GOPROXY), runs a dump program against it and stores the JSON, with the
// module version it came from. The output depends only on the module versions listed below,
// so a rerun reproduces the committed files byte for byte.
//
// Usage (from the repository root; `make bootstrapsets` runs it):
//
//	go run ./hack/bootstrapsets [-out internal/nativeview/bootstrapset/sets]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// modules maps each Kubernetes minor version to the k8s.io/apiserver release whose bootstrap
// objects stand for it (1.29 and 1.36 are the patch releases of the envtest binaries, 1.37 the
// version go.mod requires).
var modules = []struct{ minor, module string }{
	{"1.29", "v0.29.15"},
	{"1.30", "v0.30.14"},
	{"1.31", "v0.31.14"},
	{"1.32", "v0.32.13"},
	{"1.33", "v0.33.13"},
	{"1.34", "v0.34.13"},
	{"1.35", "v0.35.10"},
	{"1.36", "v0.36.3"},
	{"1.37", "v0.37.0"}, // the version this module builds with
}

// dumpProgram prints the bootstrap objects of the k8s.io/apiserver it is built with.
const dumpProgram = `package main

import (
	"encoding/json"
	"os"

	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
)

func main() {
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(map[string]any{
		"kubernetesVersion":       os.Args[1],
		"module":                  "k8s.io/apiserver@" + os.Args[2],
		"mandatoryPriorityLevels": bootstrap.MandatoryPriorityLevelConfigurations,
		"mandatoryFlowSchemas":    bootstrap.MandatoryFlowSchemas,
		"suggestedPriorityLevels": bootstrap.SuggestedPriorityLevelConfigurations,
		"suggestedFlowSchemas":    bootstrap.SuggestedFlowSchemas,
	}); err != nil {
		panic(err)
	}
}
`

func main() {
	out := flag.String("out", filepath.Join("internal", "nativeview", "bootstrapset", "sets"), "output directory")
	flag.Parse()
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fail(err)
	}
	for _, m := range modules {
		data, err := dump(m.minor, m.module)
		if err != nil {
			fail(fmt.Errorf("%s (k8s.io/apiserver %s): %w", m.minor, m.module, err))
		}
		if err := os.WriteFile(filepath.Join(*out, m.minor+".json"), data, 0o644); err != nil {
			fail(err)
		}
		fmt.Fprintf(os.Stderr, "%s: k8s.io/apiserver %s\n", m.minor, m.module)
	}
}

// dump builds and runs the dump program against one k8s.io/apiserver version.
func dump(minor, module string) ([]byte, error) {
	dir, err := os.MkdirTemp("", "bootstrapset-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	gomod := "module bootstrapdump\n\ngo 1.22\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(dumpProgram), 0o644); err != nil {
		return nil, err
	}
	if _, err := run(dir, "go", "get", "k8s.io/apiserver@"+module); err != nil {
		return nil, err
	}
	if _, err := run(dir, "go", "mod", "tidy"); err != nil {
		return nil, err
	}
	return run(dir, "go", "run", "-mod=mod", ".", minor, module)
}

// run runs a command in dir with the workspace and vendoring of the caller switched off.
func run(dir string, name string, args ...string) ([]byte, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s %v: %w: %s", name, args, err, stderr.String())
	}
	return out, nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bootstrapsets:", err)
	os.Exit(1)
}
