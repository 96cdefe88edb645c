package scale

import (
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"sort"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// metricFamilies is a scrape of an operator's /metrics, by name.
type metricFamilies map[string]*dto.MetricFamily

// fetchMetrics GETs req in the delimited protobuf format, which carries native histograms.
func fetchMetrics(c *http.Client, req *http.Request) (metricFamilies, error) {
	req.Header.Set("Accept", string(expfmt.NewFormat(expfmt.TypeProtoDelim)))
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	dec := expfmt.NewDecoder(resp.Body, expfmt.ResponseFormat(resp.Header))
	out := metricFamilies{}
	for {
		mf := &dto.MetricFamily{}
		if err := dec.Decode(mf); errors.Is(err, io.EOF) {
			return out, nil
		} else if err != nil {
			return nil, fmt.Errorf("decoding /metrics: %w", err)
		}
		out[mf.GetName()] = mf
	}
}

func (f metricFamilies) snapshots() (uint64, time.Duration, error) {
	mf := f["apf_operator_snapshot_duration_seconds"]
	if mf == nil || len(mf.GetMetric()) != 1 {
		return 0, 0, errors.New("no apf_operator_snapshot_duration_seconds metric")
	}
	h := mf.GetMetric()[0].GetHistogram()
	return h.GetSampleCount(), time.Duration(h.GetSampleSum() * float64(time.Second)), nil
}

// latencyFigures are the webhook's handling times.
type latencyFigures struct {
	p50, p99 time.Duration
	requests int
	// within5ms is the share of requests handled within 5 ms (a lower bound when read from a
	// histogram: the requests of the bucket across 5 ms are counted as slower).
	within5ms float64
	// resolution says how the figures were measured.
	resolution string
}

// bucket is a histogram bucket: count observations in (previous upper, upper].
type bucket struct {
	upper float64
	count uint64
}

// webhookLatency reads controller-runtime's controller_runtime_webhook_latency_seconds over
// every webhook: its native histogram (buckets about 10 to 20% wide) where present, else the
// classic one (decades). Quantiles are the upper bound of the bucket they fall in.
func (f metricFamilies) webhookLatency() (latencyFigures, error) {
	mf := f["controller_runtime_webhook_latency_seconds"]
	if mf == nil {
		return latencyFigures{}, errors.New("no controller_runtime_webhook_latency_seconds metric")
	}
	var buckets []bucket
	var total uint64
	native := true
	for _, m := range mf.GetMetric() {
		h := m.GetHistogram()
		total += h.GetSampleCount()
		if len(h.GetPositiveSpan()) == 0 && h.GetZeroCount() == 0 {
			native = false
		}
		buckets = append(buckets, histogramBuckets(h)...)
	}
	sort.Slice(buckets, func(i, j int) bool { return buckets[i].upper < buckets[j].upper })
	res := latencyFigures{requests: int(total), resolution: "native histogram (buckets ≈ 10–20% wide)"}
	if !native {
		res.resolution = "classic histogram (decades)"
	}
	res.p50, res.p99 = quantile(buckets, total, 0.5), quantile(buckets, total, 0.99)
	var fast uint64
	for _, b := range buckets {
		if b.upper <= 0.005 {
			fast += b.count
		}
	}
	if total > 0 {
		res.within5ms = float64(fast) / float64(total)
	}
	return res, nil
}

// histogramBuckets lists a histogram's buckets: the native ones (zero bucket and positive
// spans) when it has them, else the classic ones.
func histogramBuckets(h *dto.Histogram) []bucket {
	if len(h.GetPositiveSpan()) == 0 && h.GetZeroCount() == 0 {
		var out []bucket
		var below uint64
		for _, b := range h.GetBucket() {
			out = append(out, bucket{upper: b.GetUpperBound(), count: b.GetCumulativeCount() - below})
			below = b.GetCumulativeCount()
		}
		return append(out, bucket{upper: math.Inf(1), count: h.GetSampleCount() - below})
	}
	out := []bucket{{upper: h.GetZeroThreshold(), count: h.GetZeroCount()}}
	base := math.Pow(2, math.Pow(2, -float64(h.GetSchema())))
	var index int32
	var count int64
	deltas := h.GetPositiveDelta()
	for _, span := range h.GetPositiveSpan() {
		index += span.GetOffset()
		for range span.GetLength() {
			count += deltas[0]
			deltas = deltas[1:]
			out = append(out, bucket{upper: math.Pow(base, float64(index)), count: uint64(count)})
			index++
		}
	}
	return out
}

// quantile is the upper bound of the bucket holding the q-quantile (nearest rank).
func quantile(buckets []bucket, total uint64, q float64) time.Duration {
	if total == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(total)))
	var seen uint64
	for _, b := range buckets {
		if seen += b.count; seen >= rank {
			return time.Duration(b.upper * float64(time.Second))
		}
	}
	return time.Duration(math.MaxInt64)
}
