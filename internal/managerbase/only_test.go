package managerbase_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// constructor is a function that makes a manager (or, for the makers, an operator).
type constructor struct {
	path string // import path
	name string // the package's name, when imported without one
	fn   string
}

// managerConstructors are controller-runtime's: only internal/managerbase may call them.
var managerConstructors = []constructor{
	{"sigs.k8s.io/controller-runtime", "controllerruntime", "NewManager"},
	{"sigs.k8s.io/controller-runtime/pkg/manager", "manager", "New"},
}

// makers are the ones every other caller uses: managerbase.New, or internal/operator's.
var makers = []constructor{
	{"github.com/apf-operator/apf-operator/internal/managerbase", "managerbase", "New"},
	{"github.com/apf-operator/apf-operator/internal/operator", "operator", "New"},
	{"github.com/apf-operator/apf-operator/internal/operator", "operator", "Run"},
}

// allowedManagerConstructor is the one file that calls controller-runtime's constructor.
const allowedManagerConstructor = "internal/managerbase/managerbase.go"

// uses returns the lines of file f that refer to one of cs (a call, or the function as a
// value), whatever name the import has, a dot import included.
func uses(fset *token.FileSet, f *ast.File, cs []constructor) []int {
	names := map[string][]string{} // local package name -> functions of cs
	var dotted []string
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		for _, c := range cs {
			switch {
			case c.path != path:
			case imp.Name == nil:
				names[c.name] = append(names[c.name], c.fn)
			case imp.Name.Name == ".":
				dotted = append(dotted, c.fn)
			case imp.Name.Name != "_":
				names[imp.Name.Name] = append(names[imp.Name.Name], c.fn)
			}
		}
	}
	var lines []int
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.Ident); ok && slices.Contains(names[x.Name], n.Sel.Name) {
				lines = append(lines, fset.Position(n.Pos()).Line)
			}
			return false // the selector's own identifiers are not dot-imported names
		case *ast.Ident:
			if slices.Contains(dotted, n.Name) {
				lines = append(lines, fset.Position(n.Pos()).Line)
			}
		}
		return true
	})
	return lines
}

// callsSetupWithManager reports whether f calls a SetupWithManager function: it registers the
// operator's reconcilers or webhooks with a manager.
func callsSetupWithManager(f *ast.File) bool {
	found := false
	ast.Inspect(f, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok {
			switch fn := call.Fun.(type) {
			case *ast.Ident:
				found = found || fn.Name == "SetupWithManager"
			case *ast.SelectorExpr:
				_, pkg := fn.X.(*ast.Ident)
				found = found || pkg && fn.Sel.Name == "SetupWithManager"
			}
		}
		return !found
	})
	return found
}

// repoRoot is the repository's root: the main module's, two levels up.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil || !strings.Contains(string(mod), "module github.com/apf-operator/apf-operator\n") {
		t.Fatalf("%s is not the repository's root (go.mod: %v)", root, err)
	}
	return root
}

// goFiles parses every Go file of the repository (the nested modules of test/, examples/ and
// hack/ included; testdata, vendor, bin and hidden directories excluded), by path relative to
// the root.
func goFiles(t *testing.T, root string) (*token.FileSet, map[string]*ast.File) {
	t.Helper()
	fset, files := token.NewFileSet(), map[string]*ast.File{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || name == "vendor" || name == "bin" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		files[filepath.ToSlash(rel)] = f
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fset, files
}

// TestManagersComeFromManagerbase: no Go file of the repository but managerbase.go calls
// controller-runtime's ctrl.NewManager or manager.New, so that every manager, in production
// and in tests, has the production scheme, cache transform and indexes; and every test
// package that registers the operator's reconcilers or webhooks (SetupWithManager) makes its
// managers with managerbase.New or internal/operator, among them the in-package suites of
// controllers/ and webhooks/, which cannot import internal/operator.
func TestManagersComeFromManagerbase(t *testing.T) {
	root := repoRoot(t)
	fset, files := goFiles(t, root)
	if len(files) < 100 {
		t.Fatalf("found %d Go files under %s; the walk missed the tree", len(files), root)
	}
	for _, path := range slices.Sorted(maps.Keys(files)) {
		f := files[path]
		if lines := uses(fset, f, managerConstructors); len(lines) > 0 && path != allowedManagerConstructor {
			t.Errorf("%s:%v makes a manager with controller-runtime's constructor: use managerbase.New, or in tests internal/operator", path, lines)
		}
	}
	if f := files[allowedManagerConstructor]; f == nil || len(uses(fset, f, managerConstructors)) == 0 {
		t.Errorf("%s does not call ctrl.NewManager: the check above finds nothing", allowedManagerConstructor)
	}

	setup, made := map[string]bool{}, map[string]bool{}
	for path, f := range files {
		if !strings.HasSuffix(path, "_test.go") {
			continue
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		setup[dir] = setup[dir] || callsSetupWithManager(f)
		made[dir] = made[dir] || len(uses(fset, f, makers)) > 0
	}
	for _, dir := range slices.Sorted(maps.Keys(setup)) {
		if setup[dir] && !made[dir] {
			t.Errorf("%s: its tests register reconcilers or webhooks (SetupWithManager) without a manager of managerbase.New or internal/operator", dir)
		}
	}
	for _, suite := range []string{"controllers", "webhooks"} {
		found := false
		for dir := range setup {
			found = found || setup[dir] && made[dir] && (dir == suite || strings.HasPrefix(dir, suite+"/"))
		}
		if !found {
			t.Errorf("no test package under %s/ registers the operator with a managerbase.New manager: its in-package suite must", suite)
		}
	}
}

// TestUsesFindsEveryForm: the detector finds the constructor however it is imported and
// referred to, and nothing else.
func TestUsesFindsEveryForm(t *testing.T) {
	cases := map[string]int{
		`import ctrl "sigs.k8s.io/controller-runtime"; var _, _ = ctrl.NewManager(nil, ctrl.Options{})`:                      1,
		`import "sigs.k8s.io/controller-runtime"; var _, _ = controllerruntime.NewManager(nil, controllerruntime.Options{})`: 1,
		`import "sigs.k8s.io/controller-runtime/pkg/manager"; var _, _ = manager.New(nil, manager.Options{})`:                1,
		`import m "sigs.k8s.io/controller-runtime/pkg/manager"; var f = m.New`:                                               1,
		`import . "sigs.k8s.io/controller-runtime"; var _, _ = NewManager(nil, Options{})`:                                   1,
		`import ctrl "sigs.k8s.io/controller-runtime"; var _ = ctrl.GetConfigOrDie // ctrl.NewManager`:                       0,
		`import "github.com/apf-operator/apf-operator/internal/managerbase"; var _, _ = managerbase.New(nil, nil, x)`:        0,
		`import manager "example.com/other"; var _ = manager.New()`:                                                          0,
	}
	for src, want := range cases {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "x.go", "package x; "+src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if got := len(uses(fset, f, managerConstructors)); got != want {
			t.Errorf("%s: %d uses, want %d", src, got, want)
		}
	}
}
