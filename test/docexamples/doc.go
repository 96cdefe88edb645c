// Package docexamples checks that every RequestPriority the README and docs/ show passes
// `apf-operator validate --target native` at the default share budget: each page's examples
// together, with the README's minimal configuration that a reader has already applied.
package docexamples
