package top

import (
	"bytes"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// TestShippedRoles: deploy/top/roles.yaml holds the narrow role without the debug endpoint
// (which lists each in-flight request's user and path) and the full one with it, as
// docs/top.md describes.
func TestShippedRoles(t *testing.T) {
	raw, err := os.ReadFile("../../../deploy/top/roles.yaml")
	if err != nil {
		t.Fatal(err)
	}
	urls := map[string][]string{}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	for {
		var role rbacv1.ClusterRole
		if err := dec.Decode(&role); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		for _, r := range role.Rules {
			urls[role.Name] = append(urls[role.Name], r.NonResourceURLs...)
		}
	}
	debug := func(name string) bool {
		return slices.ContainsFunc(urls[name], func(u string) bool { return strings.HasPrefix(u, "/debug") })
	}
	if !slices.Contains(urls["apf-top-metrics"], "/metrics") || debug("apf-top-metrics") {
		t.Errorf("apf-top-metrics may read %v; want /metrics and no debug endpoint", urls["apf-top-metrics"])
	}
	if !slices.Contains(urls["apf-top"], "/metrics") || !debug("apf-top") {
		t.Errorf("apf-top may read %v; want /metrics and the debug endpoints", urls["apf-top"])
	}
}
