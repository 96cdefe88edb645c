package nativeview

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The one reader of each thing (issue #36): a second reader of kube-apiserver's bootstrap set,
// of the cluster's native objects or of its seat metrics is a defect waiting to disagree.
const (
	bootstrapImport   = "k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
	flowcontrolImport = "k8s.io/api/flowcontrol/v1"
	bootstrapSetDir   = "internal/nativeview/bootstrapset"
	nativeviewDir     = "internal/nativeview"
	apfmetricsDir     = "internal/apfmetrics"
	nativeDir         = "internal/native"
)

// listAllowed are the directories that may list native objects without nativeview, and why.
var listAllowed = map[string]string{
	"controllers":        "reconcilers read the manager's cache, not the cluster",
	"internal/cli/prune": "lists the operator's own objects to delete them, with the client that deletes them",
}

// TestOneReaderOfEach scans every Go file of the repository (test files too for the bootstrap
// package) and fails when, outside the one place:
//   - a file imports k8s.io/apiserver's bootstrap package (only nativeview/bootstrapset may);
//   - a non-test file lists native FlowSchemas or priority levels, with a clientset's
//     FlowcontrolV1().FlowSchemas().List or a FlowSchemaList/PriorityLevelConfigurationList
//     (only nativeview may, and listAllowed);
//   - a non-test file names kube-apiserver's nominal seats metric (only apfmetrics may);
//   - internal/native declares a Classify function again (nativeview classifies, over
//     native.Matches; tests ask kube-apiserver's own controller, internal/native/nativetest).
func TestOneReaderOfEach(t *testing.T) {
	root := filepath.Join("..", "..")
	var scanned int
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); p != root && (strings.HasPrefix(name, ".") || name == "bin" || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		scanned++
		for _, problem := range readers(t, p, filepath.ToSlash(rel)) {
			t.Errorf("%s: %s", rel, problem)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if scanned < 100 {
		t.Fatalf("scanned %d Go files from %s; want the whole repository", scanned, root)
	}
}

// readers returns what file (rel: its path from the repository's root) reads that only the
// one place may.
func readers(t *testing.T, file, rel string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parsing %s: %v", rel, err)
	}
	dir, isTest := path.Dir(rel), strings.HasSuffix(rel, "_test.go")
	var out []string
	imports := map[string]string{} // local name -> path
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		name := path.Base(p)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		imports[name] = p
		if p == bootstrapImport && dir != bootstrapSetDir {
			out = append(out, "imports "+bootstrapImport+": take the bootstrap set from nativeview (bootstrapset)")
		}
	}
	if isTest {
		return out
	}
	mayList := dir == nativeviewDir || listAllowed[dir] != ""
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.Ident); ok && imports[x.Name] == flowcontrolImport && !mayList &&
				(n.Sel.Name == "FlowSchemaList" || n.Sel.Name == "PriorityLevelConfigurationList") {
				out = append(out, "lists native objects ("+n.Sel.Name+"): call nativeview.List")
			}
		case *ast.CallExpr:
			if !mayList && clientsetList(n) {
				out = append(out, "lists native objects with a clientset: call nativeview.List")
			}
		case *ast.FuncDecl:
			if dir == nativeDir && n.Recv == nil && n.Name.Name == "Classify" {
				out = append(out, "declares a second classifier of native objects: classify with nativeview.View.Classify")
			}
		case *ast.BasicLit:
			if n.Kind == token.STRING && strings.Contains(n.Value, "nominal_limit_seats") && dir != apfmetricsDir {
				out = append(out, "names the nominal seats metric: read seats through apfmetrics.ParseSeats or SeatsOf")
			}
		}
		return true
	})
	return out
}

// clientsetList reports whether call is X.FlowcontrolV1().FlowSchemas().List(...) or
// X.FlowcontrolV1().PriorityLevelConfigurations().List(...).
func clientsetList(call *ast.CallExpr) bool {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "List" {
		return false
	}
	kind, ok := sel.X.(*ast.CallExpr)
	if !ok {
		return false
	}
	kindSel, ok := kind.Fun.(*ast.SelectorExpr)
	if !ok || (kindSel.Sel.Name != "FlowSchemas" && kindSel.Sel.Name != "PriorityLevelConfigurations") {
		return false
	}
	group, ok := kindSel.X.(*ast.CallExpr)
	if !ok {
		return false
	}
	groupSel, ok := group.Fun.(*ast.SelectorExpr)
	return ok && groupSel.Sel.Name == "FlowcontrolV1"
}
