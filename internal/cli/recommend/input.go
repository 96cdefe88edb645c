package recommend

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apfmetrics"
	"github.com/apf-operator/apf-operator/internal/autopilot"
	"github.com/apf-operator/apf-operator/internal/cli/cmdutil"
	"github.com/apf-operator/apf-operator/internal/manifest"
	"github.com/apf-operator/apf-operator/internal/nativeview"
)

// savedEpoch is the time given to the first saved /metrics text (they have none); the second
// is --window later. Only the difference counts.
var savedEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// input is what a recommendation is computed from: the pool's levels and two reads of the
// metrics.
type input struct {
	levels    []autopilot.Level
	skipped   []skip
	where     map[string]location
	prev, cur *apfmetrics.Snapshot
	// source says where the metrics came from, for the heading.
	source string
}

// read gathers the input, from the saved files or from the cluster.
func (o *options) read(ctx context.Context, kube *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) (*input, error) {
	var located []manifest.LocatedRequestPriority
	if len(o.filenames) > 0 {
		var err error
		if located, err = manifest.LoadRequestPriorities(o.filenames, streams.In); err != nil {
			return nil, err
		}
	}
	in := &input{where: map[string]location{}}
	for _, rp := range located {
		in.where[rp.Name] = location{File: rp.File, Line: rp.Line}
	}
	var err error
	if o.saved() {
		err = o.readSaved(in, located)
	} else {
		err = o.readLive(ctx, in, kube, streams)
	}
	if err != nil {
		return nil, err
	}
	if err := requireDemand(in.prev, in.cur); err != nil {
		return nil, err
	}
	var noDemand []skip
	in.levels, noDemand = withDemand(in.levels, in.prev, in.cur)
	in.skipped = append(in.skipped, noDemand...)
	sortSkips(in.skipped)
	return in, nil
}

// readSaved reads the saved /metrics texts (summing replicas) and takes the levels from the
// manifests.
func (o *options) readSaved(in *input, located []manifest.LocatedRequestPriority) error {
	if len(located) == 0 {
		return fmt.Errorf("-f %s: no RequestPriority found (a wrong path, or an overlay that renders nothing?)", strings.Join(o.filenames, ","))
	}
	var err error
	if in.prev, err = readFiles("--metrics-from", o.metricsFrom, savedEpoch); err != nil {
		return err
	}
	if in.cur, err = readFiles("--metrics-to", o.metricsTo, savedEpoch.Add(o.window)); err != nil {
		return err
	}
	in.levels, in.skipped = levelsFromManifests(located)
	replicas := "1 kube-apiserver replica"
	if n := len(o.metricsFrom); n > 1 {
		replicas = fmt.Sprintf("%d kube-apiserver replicas, summed", n)
	}
	in.source = fmt.Sprintf("saved: %s -> %s; %s", strings.Join(o.metricsFrom, ","), strings.Join(o.metricsTo, ","), replicas)
	return nil
}

// readFiles reads one saved /metrics text per replica, all at t, and sums them.
func readFiles(flag string, files []string, t time.Time) (*apfmetrics.Snapshot, error) {
	snaps := make([]*apfmetrics.Snapshot, 0, len(files))
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", flag, err)
		}
		s, err := apfmetrics.FromText(raw, t)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", flag, f, err)
		}
		snaps = append(snaps, s)
	}
	return apfmetrics.Merge(snaps...), nil
}

// requireDemand fails when the metrics have no demand histogram at all: kube-apiserver older
// than the autopilot needs, or not kube-apiserver's metrics.
func requireDemand(prev, cur *apfmetrics.Snapshot) error {
	if len(prev.Demand) > 0 && len(cur.Demand) > 0 {
		return nil
	}
	return fmt.Errorf("the metrics have no %s series: recommend needs kube-apiserver's seat-demand metrics (%s, %s), "+
		"published by kube-apiserver 1.29 and later with API Priority and Fairness enabled",
		apfmetrics.DemandMetric, apfmetrics.DemandMetric, apfmetrics.DemandHighWatermarkMetric)
}

// readLive lists the cluster's RequestPriorities and native levels, then reads /metrics twice,
// --window apart.
func (o *options) readLive(ctx context.Context, in *input, kube *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) error {
	cfg, err := kube.ToRESTConfig()
	if err != nil {
		return err
	}
	clientset, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	rps, err := listRequestPriorities(ctx, cfg)
	if err != nil {
		return err
	}
	plcs, err := nativeview.ListPriorityLevels(ctx, clientset)
	if err != nil {
		return err
	}
	in.levels, in.skipped = levelsFromCluster(rps, plcs)
	raw := clientset.Discovery().RESTClient()
	get := func(ctx context.Context, path string) ([]byte, error) {
		b, err := cmdutil.RawGet(ctx, raw, path)
		if err != nil {
			return nil, fmt.Errorf("GET %s: %w (recommend needs get on nonResourceURLs /metrics)", path, err)
		}
		return b, nil
	}
	if in.prev, err = apfmetrics.Read(ctx, get); err != nil {
		return err
	}
	progress(streams.ErrOut, "reading demand for %s (--window)...", o.window)
	if err := sleep(ctx, o.window); err != nil {
		return err
	}
	if in.cur, err = apfmetrics.Read(ctx, get); err != nil {
		return err
	}
	in.source = cfg.Host + "; one kube-apiserver replica: the one that answered"
	return nil
}

// listRequestPriorities lists the cluster's RequestPriorities.
func listRequestPriorities(ctx context.Context, cfg *rest.Config) ([]flowv1.RequestPriority, error) {
	s := runtime.NewScheme()
	if err := flowv1.AddToScheme(s); err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return nil, err
	}
	var rps flowv1.RequestPriorityList
	err = c.List(ctx, &rps)
	var noMatch *meta.NoKindMatchError
	switch {
	case errors.As(err, &noMatch) || meta.IsNoMatchError(err):
		return nil, errors.New("the cluster has no RequestPriority API (flowcontrol.apf-operator.io/v1alpha1): is the operator installed?")
	case err != nil:
		return nil, fmt.Errorf("listing RequestPriorities: %w", err)
	}
	return rps.Items, nil
}
