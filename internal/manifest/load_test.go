package manifest

import (
	"path/filepath"
	"strings"
	"testing"
)

// corpus is the validation rules' corpus of manifests.
var corpus = filepath.Join("..", "validation", "testdata")

func TestLoadObjects(t *testing.T) {
	rps, fss, err := LoadObjects([]string{filepath.Join(corpus, "valid")}, nil)
	if err != nil || len(rps) != 5 || len(fss) != 5 {
		t.Fatalf("LoadObjects(valid) = %d, %d, %v; want the proposal's 5 and 5", len(rps), len(fss), err)
	}
	file := filepath.Join(corpus, "invalid", "rp-unknown-field.yaml")
	if _, _, err := LoadObjects([]string{file}, nil); err == nil || !strings.Contains(err.Error(), file+":11:3: spec.handsize: unknown field") {
		t.Fatalf("LoadObjects(unknown field) error = %v; want the finding with file, line and column", err)
	}
	file = filepath.Join(corpus, "invalid", "rp-wrong-type.yaml")
	if _, _, err := LoadObjects([]string{file}, nil); err == nil || !strings.Contains(err.Error(), file+`:6:3: spec.priorityLevel: Invalid value: a string cannot be decoded as int32`) {
		t.Fatalf("LoadObjects(wrong type) error = %v; want the finding on the field", err)
	}
}
