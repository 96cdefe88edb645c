package bootstrapset

import (
	"embed"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
)

//go:generate go run ../../../hack/bootstrapsets -out sets

// sets holds, per Kubernetes minor version, the bootstrap objects of the k8s.io/apiserver
// release named in the file (written by hack/bootstrapsets; do not edit).
//
//go:embed sets/*.json
var sets embed.FS

// Set is kube-apiserver's bootstrap configuration of one Kubernetes minor version.
type Set struct {
	// KubernetesVersion is the minor version, e.g. "1.29".
	KubernetesVersion string `json:"kubernetesVersion"`
	// Module is the module the objects were read from, e.g. "k8s.io/apiserver@v0.29.15".
	Module string `json:"module"`
	// The mandatory and suggested objects, in the order kube-apiserver lists them.
	MandatoryPriorityLevels []flowcontrolv1.PriorityLevelConfiguration `json:"mandatoryPriorityLevels"`
	MandatoryFlowSchemas    []flowcontrolv1.FlowSchema                 `json:"mandatoryFlowSchemas"`
	SuggestedPriorityLevels []flowcontrolv1.PriorityLevelConfiguration `json:"suggestedPriorityLevels"`
	SuggestedFlowSchemas    []flowcontrolv1.FlowSchema                 `json:"suggestedFlowSchemas"`
}

// FlowSchemas returns the mandatory and suggested FlowSchemas (deep copies), mandatory first.
func (s *Set) FlowSchemas() []flowcontrolv1.FlowSchema {
	out := make([]flowcontrolv1.FlowSchema, 0, len(s.MandatoryFlowSchemas)+len(s.SuggestedFlowSchemas))
	for _, list := range [][]flowcontrolv1.FlowSchema{s.MandatoryFlowSchemas, s.SuggestedFlowSchemas} {
		for i := range list {
			out = append(out, *list[i].DeepCopy())
		}
	}
	return out
}

// PriorityLevels returns the mandatory and suggested priority levels (deep copies), mandatory
// first.
func (s *Set) PriorityLevels() []flowcontrolv1.PriorityLevelConfiguration {
	out := make([]flowcontrolv1.PriorityLevelConfiguration, 0, len(s.MandatoryPriorityLevels)+len(s.SuggestedPriorityLevels))
	for _, list := range [][]flowcontrolv1.PriorityLevelConfiguration{s.MandatoryPriorityLevels, s.SuggestedPriorityLevels} {
		for i := range list {
			out = append(out, *list[i].DeepCopy())
		}
	}
	return out
}

// Versions returns the Kubernetes minor versions ForVersion knows, oldest first.
func Versions() []string {
	entries, err := sets.ReadDir("sets")
	if err != nil {
		panic(err) // embedded at build time
	}
	var out []string
	for _, e := range entries {
		out = append(out, strings.TrimSuffix(e.Name(), ".json"))
	}
	slices.SortFunc(out, compareMinor)
	return out
}

// Newest returns the newest Kubernetes minor version ForVersion knows.
func Newest() string {
	v := Versions()
	return v[len(v)-1]
}

var (
	loadMu sync.Mutex
	loaded = map[string]*Set{}
)

// ForVersion returns the bootstrap configuration of a Kubernetes minor version, given as
// "1.29", "v1.29" or a patch version such as "1.29.3" (the patch is ignored: the suggested
// objects change only with minor versions). The Set is shared: use its methods, which copy.
func ForVersion(version string) (*Set, error) {
	minor, ok := parseMinor(version)
	if !ok || !slices.Contains(Versions(), minor) {
		known := Versions()
		return nil, fmt.Errorf("no bootstrap set for Kubernetes version %q: the bootstrap sets known are those of %s to %s; give one "+
			"of %s", version, known[0], known[len(known)-1], strings.Join(known, ", "))
	}
	loadMu.Lock()
	defer loadMu.Unlock()
	if s := loaded[minor]; s != nil {
		return s, nil
	}
	data, err := sets.ReadFile("sets/" + minor + ".json")
	if err != nil {
		return nil, err
	}
	s := &Set{}
	if err := json.Unmarshal(data, s); err != nil {
		return nil, fmt.Errorf("bootstrap set %s: %w", minor, err)
	}
	loaded[minor] = s
	return s, nil
}

// parseMinor reduces "v1.29.3", "1.29.3", "v1.29" or "1.29" to "1.29".
func parseMinor(version string) (string, bool) {
	parts := strings.Split(strings.TrimPrefix(version, "v"), ".")
	if len(parts) < 2 || len(parts) > 3 {
		return "", false
	}
	for _, p := range parts {
		if _, err := strconv.ParseUint(p, 10, 16); err != nil {
			return "", false
		}
	}
	return parts[0] + "." + parts[1], true
}

// compareMinor orders "1.9" before "1.29".
func compareMinor(a, b string) int {
	minor := func(v string) int {
		_, m, _ := strings.Cut(v, ".")
		n, _ := strconv.Atoi(m)
		return n
	}
	return minor(a) - minor(b)
}
