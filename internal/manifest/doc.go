// Package manifest reads the operator's manifests: it splits files, directories (searched
// recursively for .yaml, .yml and .json files, less --exclude globs) and standard input into
// YAML documents that know the file and line they start on, decodes RequestPriority,
// FlowSchema and EventRateLimit objects from them strictly (unknown and duplicate fields,
// values of the wrong type in the CRD schema's words), and points every finding at
// FILE:LINE:COLUMN of the field it is about.
//
// It is the one manifest reader: validate, import, explain, replay, recommend and the public
// package pkg/apf all read through it. It has no command-line dependencies (no cobra, no
// cli-runtime), so that pkg/apf stays embeddable.
package manifest
