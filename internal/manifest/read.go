package manifest

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

// StdinName is how findings name standard input.
const StdinName = "<stdin>"

// Document is one YAML document of an input file.
type Document struct {
	// File is the file's path as given ("<stdin>" for standard input).
	File string
	// Index counts the documents of the file from 0.
	Index int
	// Line is the 1-based line of the file on which the document starts.
	Line int
	// Data is the document's text.
	Data []byte
	// Root is the field path of the object within the document ("items[2]." for an item of a
	// List), so that a finding's field can be found in data.
	Root string
}

// manifestExtensions are the file names searched in directories.
var manifestExtensions = map[string]bool{".yaml": true, ".yml": true, ".json": true}

// Read reads every path into documents, leaving out the files that match an exclude glob
// (see excluded); unreadable paths become error findings.
func Read(paths, excludes []string, stdin io.Reader) ([]Document, []Finding) {
	var docs []Document
	var findings []Finding
	for _, p := range paths {
		files, err := expand(p, excludes)
		if err != nil {
			findings = append(findings, FileFinding(p, err))
			continue
		}
		for _, f := range files {
			d, err := readFile(f, stdin)
			if err != nil {
				findings = append(findings, FileFinding(f, err))
			}
			docs = append(docs, d...)
		}
	}
	return docs, findings
}

// expand turns a path into the files it names: itself, or the manifests under a directory in
// lexical order; either without those an exclude glob matches.
func expand(p string, excludes []string) ([]string, error) {
	if p == "-" {
		return []string{p}, nil
	}
	info, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		if excluded(filepath.ToSlash(filepath.Clean(p)), excludes) {
			return nil, nil
		}
		return []string{p}, nil
	}
	var files []string
	err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, relErr := filepath.Rel(p, path)
		if relErr != nil || rel == "." {
			return relErr
		}
		switch {
		case excluded(filepath.ToSlash(rel), excludes):
			if d.IsDir() {
				return filepath.SkipDir
			}
		case !d.IsDir() && manifestExtensions[strings.ToLower(filepath.Ext(path))]:
			files = append(files, path)
		}
		return nil
	})
	sort.Strings(files)
	return files, err
}

// readFile splits a file (or standard input for "-") into its YAML documents, each with the
// line it starts on.
func readFile(name string, stdin io.Reader) ([]Document, error) {
	var data []byte
	var err error
	if name == "-" {
		name = StdinName
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(name)
	}
	if err != nil {
		return nil, err
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	lines := bytes.Split(data, []byte("\n"))
	var docs []Document
	next := 0 // the index in lines of the first line not yet consumed
	for i := 0; ; i++ {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return docs, err
		}
		next = skipSeparators(lines, next)
		if len(bytes.TrimSpace(doc)) > 0 {
			docs = append(docs, Document{File: name, Index: i, Line: next + 1, Data: doc})
		}
		// The reader returns each line it consumed ended by one '\n' (a "\r\n" too).
		next += bytes.Count(doc, []byte("\n"))
	}
}

// skipSeparators returns the index of the first line at or after next that is not a `---`
// separator: the YAML reader consumes them between documents, and no document holds a line
// starting with `---` (the reader takes it for a separator, or fails).
func skipSeparators(lines [][]byte, next int) int {
	for next < len(lines) && bytes.HasPrefix(lines[next], []byte("---")) {
		next++
	}
	return next
}
