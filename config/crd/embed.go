// Package crd embeds the CustomResourceDefinitions that controller-gen generates into bases/
// (`make manifests`), so that the offline validator checks manifests against the very OpenAPI
// schemas and CEL rules the API server enforces.
package crd

import "embed"

// Bases holds bases/*.yaml, the generated CRDs.
//
//go:embed bases/*.yaml
var Bases embed.FS
