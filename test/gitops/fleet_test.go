package gitops_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/apf-operator/apf-operator/internal/cli/validate"
	"github.com/apf-operator/apf-operator/test/envtestutil"
)

// The fleet examples treat this repository as the fleet repository: the paths they name are
// relative to its root, and its URL is the one they fetch the chart from.
const (
	fleetDir       = "examples/fleet"
	projectRepoURL = "https://github.com/apf-operator/apf-operator.git"
	// fluxBootstrapSource is the GitRepository `flux bootstrap` creates for the fleet repository.
	fluxBootstrapSource = "flux-system/flux-system"
)

// fleetKinds are the apiVersion/kind pairs the examples may use: Argo CD's and Flux's current
// APIs, kustomize's, and the operator's own.
var fleetKinds = map[string]bool{
	"argoproj.io/v1alpha1/ApplicationSet":           true,
	"source.toolkit.fluxcd.io/v1/GitRepository":     true,
	"helm.toolkit.fluxcd.io/v2/HelmRelease":         true,
	"kustomize.toolkit.fluxcd.io/v1/Kustomization":  true,
	"kustomize.config.k8s.io/v1beta1/Kustomization": true,
	"v1/Namespace": true,
	"flowcontrol.apf-operator.io/v1alpha1/RequestPriority": true,
	"flowcontrol.apf-operator.io/v1alpha1/FlowSchema":      true,
}

// fleetDoc is one YAML document of the examples.
type fleetDoc struct {
	file string // relative to the repository root
	obj  *unstructured.Unstructured
}

func (d fleetDoc) String() string { return d.file + ": " + d.obj.GetKind() + " " + d.obj.GetName() }

func (d fleetDoc) typeKey() string { return d.obj.GetAPIVersion() + "/" + d.obj.GetKind() }

// loadFleet decodes every document of every YAML file under examples/fleet and checks its type.
func loadFleet(t *testing.T) []fleetDoc {
	t.Helper()
	root := envtestutil.RepoRoot()
	var docs []fleetDoc
	err := filepath.WalkDir(filepath.Join(root, fleetDir), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".yaml" {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		objs, err := decodeFile(path)
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		for _, obj := range objs {
			docs = append(docs, fleetDoc{file: rel, obj: obj})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		unnamed := d.obj.GetName() == "" && d.typeKey() != "kustomize.config.k8s.io/v1beta1/Kustomization"
		if !fleetKinds[d.typeKey()] || unnamed {
			t.Errorf("%s: unexpected type %s or no name", d, d.typeKey())
		}
	}
	return docs
}

func decodeFile(path string) ([]*unstructured.Unstructured, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return decodeYAML(f)
}

// decodeYAML decodes every object of a multi-document YAML stream.
func decodeYAML(r io.Reader) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(r, 4096)
	var out []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(&obj.Object); errors.Is(err, io.EOF) {
			return out, nil
		} else if err != nil {
			return nil, err
		}
		if len(obj.Object) > 0 {
			out = append(out, obj)
		}
	}
}

// ofType returns the documents of one apiVersion/kind.
func ofType(docs []fleetDoc, typeKey string) []fleetDoc {
	var out []fleetDoc
	for _, d := range docs {
		if d.typeKey() == typeKey {
			out = append(out, d)
		}
	}
	return out
}

// fleetClusters returns the example clusters: the directories of examples/fleet/clusters.
func fleetClusters(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(envtestutil.RepoRoot(), fleetDir, "clusters"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		t.Fatalf("%s/clusters holds no cluster", fleetDir)
	}
	return names
}

func str(obj map[string]any, fields ...string) string {
	s, _, _ := unstructured.NestedString(obj, fields...)
	return s
}

func nestedMap(obj map[string]any, fields ...string) map[string]any {
	m, _, _ := unstructured.NestedMap(obj, fields...)
	return m
}

// repoDir fails unless path (relative to the repository root, "./" allowed) is a directory.
func repoDir(path string) error {
	info, err := os.Stat(filepath.Join(envtestutil.RepoRoot(), filepath.FromSlash(path)))
	if err != nil || !info.IsDir() {
		return fmt.Errorf("path %q is not a directory of this repository", path)
	}
	return nil
}

// chartDir fails unless path is a Helm chart of this repository.
func chartDir(path string) error {
	if err := repoDir(path); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(envtestutil.RepoRoot(), filepath.FromSlash(path), "Chart.yaml")); err != nil {
		return fmt.Errorf("path %q holds no Chart.yaml", path)
	}
	return nil
}

// clusterParam matches the cluster generator's parameters in Go-template form.
var clusterParam = regexp.MustCompile(`\{\{\s*\.(name|server)\s*\}\}`)

// TestFleetArgoCDApplicationSets checks the ApplicationSets: a cluster generator, the chart and
// its values from this repository, and for each example cluster a configuration path that
// exists and passes `validate --target native`.
func TestFleetArgoCDApplicationSets(t *testing.T) {
	sets := ofType(loadFleet(t), "argoproj.io/v1alpha1/ApplicationSet")
	if len(sets) != 2 {
		t.Fatalf("%d ApplicationSets, want 2 (the operator and the configuration)", len(sets))
	}
	var charts, configs int
	for _, d := range sets {
		spec := nestedMap(d.obj.Object, "spec")
		gens, _, _ := unstructured.NestedSlice(spec, "generators")
		if len(gens) != 1 || nestedMap(gens[0].(map[string]any), "clusters") == nil {
			t.Errorf("%s: want one cluster generator, got %v", d, gens)
		}
		tmpl := nestedMap(spec, "template")
		if name := str(tmpl, "metadata", "name"); !strings.Contains(name, "{{.name}}") {
			t.Errorf("%s: Application name %q is not unique per cluster ({{.name}})", d, name)
		}
		if server := str(tmpl, "spec", "destination", "server"); server != "{{.server}}" {
			t.Errorf("%s: destination server %q, want the generated cluster's {{.server}}", d, server)
		}
		source := nestedMap(tmpl, "spec", "source")
		if url := str(source, "repoURL"); url != projectRepoURL {
			t.Errorf("%s: repoURL %q, want %q", d, url, projectRepoURL)
		}
		path := str(source, "path")
		if helm := nestedMap(source, "helm"); helm != nil {
			charts++
			if err := chartDir(path); err != nil {
				t.Errorf("%s: %v", d, err)
			}
			checkChartValues(t, d.String(), nestedMap(helm, "valuesObject"))
			continue
		}
		configs++
		for _, cluster := range fleetClusters(t) {
			expanded := strings.ReplaceAll(path, "{{.name}}", cluster)
			if strings.Contains(expanded, "{{") {
				t.Errorf("%s: path %q uses a parameter the test does not know", d, path)
				continue
			}
			checkConfigDir(t, d.String(), expanded)
		}
	}
	if charts != 1 || configs != 1 {
		t.Errorf("%d chart and %d configuration ApplicationSets, want one of each", charts, configs)
	}
	for _, d := range sets {
		b, _ := yaml.Marshal(d.obj.Object)
		for _, m := range regexp.MustCompile(`\{\{[^}]*\}\}`).FindAllString(string(b), -1) {
			if !clusterParam.MatchString(m) {
				t.Errorf("%s: template parameter %s is not one the cluster generator provides", d, m)
			}
		}
	}
}

// TestFleetFlux checks the Flux example: the HelmRelease's chart, source and values, and for
// each example cluster the Kustomizations that install the operator and then the cluster's
// configuration.
func TestFleetFlux(t *testing.T) {
	docs := loadFleet(t)
	sources := map[string]string{fluxBootstrapSource: projectRepoURL}
	for _, d := range ofType(docs, "source.toolkit.fluxcd.io/v1/GitRepository") {
		sources[d.obj.GetNamespace()+"/"+d.obj.GetName()] = str(d.obj.Object, "spec", "url")
	}
	releases := ofType(docs, "helm.toolkit.fluxcd.io/v2/HelmRelease")
	if len(releases) != 1 {
		t.Fatalf("%d HelmReleases, want 1", len(releases))
	}
	for _, d := range releases {
		chart := nestedMap(d.obj.Object, "spec", "chart", "spec")
		if err := chartDir(str(chart, "chart")); err != nil {
			t.Errorf("%s: %v", d, err)
		}
		checkSource(t, d.String(), sources, nestedMap(chart, "sourceRef"), d.obj.GetNamespace())
		checkChartValues(t, d.String(), nestedMap(d.obj.Object, "spec", "values"))
	}
	for _, cluster := range fleetClusters(t) {
		checkFluxCluster(t, docs, sources, cluster)
	}
	for _, d := range ofType(docs, "kustomize.config.k8s.io/v1beta1/Kustomization") {
		resources, _, _ := unstructured.NestedStringSlice(d.obj.Object, "resources")
		for _, r := range resources {
			if _, err := os.Stat(filepath.Join(envtestutil.RepoRoot(), filepath.Dir(d.file), r)); err != nil {
				t.Errorf("%s: resource %s: %v", d, r, err)
			}
		}
	}
}

// checkFluxCluster checks the Kustomizations of one cluster: an operator Kustomization that
// waits, and a configuration Kustomization that depends on it and applies the cluster's
// configuration directory.
func checkFluxCluster(t *testing.T, docs []fleetDoc, sources map[string]string, cluster string) {
	t.Helper()
	dir := filepath.ToSlash(filepath.Join(fleetDir, "flux", "clusters", cluster))
	byName := map[string]fleetDoc{}
	for _, d := range ofType(docs, "kustomize.toolkit.fluxcd.io/v1/Kustomization") {
		if filepath.ToSlash(filepath.Dir(d.file)) == dir {
			byName[d.obj.GetName()] = d
		}
	}
	config, ok := byName["apf-config"]
	if !ok || len(byName) != 2 {
		t.Fatalf("%s: Kustomizations %v, want apf-operator and apf-config", dir, slices.Sorted(maps.Keys(byName)))
	}
	for _, d := range byName {
		spec := nestedMap(d.obj.Object, "spec")
		if err := repoDir(str(spec, "path")); err != nil {
			t.Errorf("%s: %v", d, err)
		}
		checkSource(t, d.String(), sources, nestedMap(spec, "sourceRef"), d.obj.GetNamespace())
		if wait, _, _ := unstructured.NestedBool(spec, "wait"); !wait {
			t.Errorf("%s: spec.wait is not true: Flux would not wait for health", d)
		}
	}
	deps, _, _ := unstructured.NestedSlice(config.obj.Object, "spec", "dependsOn")
	if len(deps) != 1 {
		t.Fatalf("%s: dependsOn %v, want the operator's Kustomization", config, deps)
	}
	if dep, ok := byName[str(deps[0].(map[string]any), "name")]; !ok || dep.obj.GetName() == config.obj.GetName() {
		t.Errorf("%s: dependsOn %v names no other Kustomization of the cluster", config, deps)
	}
	want := "./" + filepath.ToSlash(filepath.Join(fleetDir, "clusters", cluster, "apf"))
	if path := str(config.obj.Object, "spec", "path"); path != want {
		t.Errorf("%s: path %q, want this cluster's configuration %q", config, path, want)
	}
	checkConfigDir(t, config.String(), want)
}

// checkSource fails unless ref names a known GitRepository of this repository.
func checkSource(t *testing.T, what string, sources map[string]string, ref map[string]any, defaultNamespace string) {
	t.Helper()
	ns := str(ref, "namespace")
	if ns == "" {
		ns = defaultNamespace
	}
	key := ns + "/" + str(ref, "name")
	if str(ref, "kind") != "GitRepository" || sources[key] != projectRepoURL {
		t.Errorf("%s: sourceRef %v is not a GitRepository of %s", what, ref, projectRepoURL)
	}
}

// checkConfigDir fails unless dir exists and the offline validator accepts its objects as
// exactly enforceable by kube-apiserver.
func checkConfigDir(t *testing.T, what, dir string) {
	t.Helper()
	if err := repoDir(dir); err != nil {
		t.Errorf("%s: %v", what, err)
		return
	}
	var out, errOut bytes.Buffer
	path := filepath.Join(envtestutil.RepoRoot(), filepath.FromSlash(dir))
	if code := validate.Run([]string{"--target", "native", "-f", path}, nil, &out, &errOut); code != validate.ExitOK {
		t.Errorf("%s: apf-operator validate --target native -f %s: exit %d\n%s%s", what, dir, code, out.String(), errOut.String())
	}
	if !strings.Contains(errOut.String(), "object(s) checked") || strings.HasPrefix(errOut.String(), "0 object(s)") {
		t.Errorf("%s: %s holds no RequestPriority or FlowSchema: %s", what, dir, errOut.String())
	}
}

// checkChartValues renders the chart with values, which Helm validates against
// values.schema.json (additionalProperties: false, so a misspelt key fails).
func checkChartValues(t *testing.T, what string, values map[string]any) {
	t.Helper()
	if len(values) == 0 {
		t.Errorf("%s: no chart values", what)
		return
	}
	if err := helmTemplate(t, values); err != nil {
		t.Errorf("%s: the chart refuses its values: %v", what, err)
	}
}

// helmTemplate runs `helm template` on the chart with values.
func helmTemplate(t *testing.T, values map[string]any) error {
	t.Helper()
	bin, err := envtestutil.Tool("helm")
	if err != nil {
		t.Fatal(err)
	}
	b, err := yaml.Marshal(values)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	chart := filepath.Join(envtestutil.RepoRoot(), "charts", "apf-operator")
	var stderr bytes.Buffer
	cmd := exec.Command(bin, "template", "apf-operator", chart, "--namespace", "apf-operator-system", "-f", file)
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%w: %s", err, stderr.String())
	}
	return nil
}

// TestFleetValuesCheckBites makes sure the values check above can fail: a key the chart does
// not have, and a value of the wrong type, are refused.
func TestFleetValuesCheckBites(t *testing.T) {
	for _, values := range []map[string]any{
		{"exempt": map[string]any{"group": []any{"system:masters"}}},
		{"enforcement": "everywhere"},
	} {
		if err := helmTemplate(t, values); err == nil {
			t.Errorf("helm template accepted values %v", values)
		}
	}
}
