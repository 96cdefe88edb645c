// Package version implements `apf-operator version`: the build's identity as one line, or as
// JSON or YAML with -o.
package version

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"

	"github.com/apf-operator/apf-operator/internal/cli/cmdutil"
	buildinfo "github.com/apf-operator/apf-operator/internal/version"
)

// NewCommand returns the version command.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Show the build's version",
		Long: `Show the build's version: its git tag (v0.0.0-<commit> for an untagged commit), commit, build
date, Go version and platform. 'make build', 'make image' and the Dockerfile stamp them in.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return Print(streams.Out, buildinfo.Get(), output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "Output format. One of: (json, yaml). Default: one line.")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"json", "yaml"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// Print writes info in format: "" (one line), "json" or "yaml".
func Print(w io.Writer, info buildinfo.Info, format string) error {
	var data []byte
	var err error
	switch format {
	case "":
		data = []byte(info.String() + "\n")
	case "json":
		data, err = json.MarshalIndent(info, "", "  ")
		data = append(data, '\n')
	case "yaml":
		data, err = yaml.Marshal(info)
	default:
		return cmdutil.UsageErrorf("--output=%q: use json or yaml (or no -o for one line)", format)
	}
	if err != nil {
		return fmt.Errorf("encoding the version: %w", err)
	}
	_, err = w.Write(data)
	return err
}
