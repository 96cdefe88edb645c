package validate

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// stdinName is how findings name standard input.
const stdinName = "<stdin>"

// document is one YAML document of an input file.
type document struct {
	file  string
	index int
	data  []byte
}

// manifestExtensions are the file names searched in directories.
var manifestExtensions = map[string]bool{".yaml": true, ".yml": true, ".json": true}

// collect reads every path into documents; unreadable paths become error findings.
func collect(paths []string, stdin io.Reader) ([]document, []finding) {
	var docs []document
	var findings []finding
	for _, p := range paths {
		files, err := expand(p)
		if err != nil {
			findings = append(findings, fileFinding(p, err))
			continue
		}
		for _, f := range files {
			d, err := readFile(f, stdin)
			if err != nil {
				findings = append(findings, fileFinding(f, err))
			}
			docs = append(docs, d...)
		}
	}
	return docs, findings
}

// expand turns a path into the files it names: itself, or the manifests under a directory in
// lexical order.
func expand(p string) ([]string, error) {
	if p == "-" {
		return []string{p}, nil
	}
	info, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return []string{p}, nil
	}
	var files []string
	err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && manifestExtensions[strings.ToLower(filepath.Ext(path))] {
			files = append(files, path)
		}
		return nil
	})
	sort.Strings(files)
	return files, err
}

// readFile splits a file (or standard input for "-") into its YAML documents.
func readFile(name string, stdin io.Reader) ([]document, error) {
	var r io.Reader
	if name == "-" {
		name, r = stdinName, stdin
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(r))
	var docs []document
	for i := 0; ; i++ {
		data, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return docs, err
		}
		if len(bytes.TrimSpace(data)) > 0 {
			docs = append(docs, document{file: name, index: i, data: data})
		}
	}
}
