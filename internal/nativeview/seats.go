package nativeview

import (
	"bufio"
	"bytes"
	"math"
	"strconv"
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
)

// nominalSeatsMetric is kube-apiserver's gauge of each level's nominal concurrency limit.
const nominalSeatsMetric = "apiserver_flowcontrol_nominal_limit_seats"

// parseNominalSeats reads apiserver_flowcontrol_nominal_limit_seats{priority_level="x"} N
// lines of a Prometheus text exposition, by level.
func parseNominalSeats(body []byte) map[string]int64 {
	out := map[string]int64{}
	s := bufio.NewScanner(bytes.NewReader(body))
	s.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for s.Scan() {
		line, ok := strings.CutPrefix(s.Text(), nominalSeatsMetric+"{")
		if !ok {
			continue
		}
		labels, value, ok := strings.Cut(line, "} ")
		if !ok {
			continue
		}
		level := labelValue(labels, "priority_level")
		n, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if level != "" && err == nil && n >= 0 {
			out[level] = int64(n)
		}
	}
	return out
}

// labelValue returns the value of label name in a Prometheus label list a="x",b="y"
// (values without escapes, as level names are).
func labelValue(labels, name string) string {
	for _, kv := range strings.Split(labels, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if ok && strings.TrimSpace(k) == name {
			return strings.Trim(v, `"`)
		}
	}
	return ""
}

// serverSeatsFrom finds the server concurrency limit n that kube-apiserver used: the largest n
// with ceil(n * shares(l) / shareSum) == seats(l) for every level both know and whose shares are
// not 0 (rounding up leaves a range of a few seats; kube-apiserver's default, 600, is the top of
// its range with the suggested levels). It returns 0 when no level qualifies or no n fits.
func serverSeatsFrom(levels map[string]*flowcontrolv1.PriorityLevelConfiguration, seats map[string]int64,
	shareSum float64) int64 {
	type known struct {
		shares float64
		seats  int64
	}
	var ks []known
	lower, upper := int64(1), int64(math.MaxInt64)
	for name, l := range levels {
		s, ok := seats[name]
		if sh := float64(nominalShares(l)); ok && sh > 0 {
			ks = append(ks, known{sh, s})
			// ceil(n*sh/sum) == s  iff  (s-1)*sum/sh < n <= s*sum/sh.
			lower = max(lower, int64(math.Floor(float64(s-1)*shareSum/sh))+1)
			upper = min(upper, int64(math.Floor(float64(s)*shareSum/sh)))
		}
	}
	if len(ks) == 0 || shareSum <= 0 {
		return 0
	}
	for n := upper; n >= lower; n-- {
		fits := true
		for _, k := range ks {
			if int64(math.Ceil(float64(n)*k.shares/shareSum)) != k.seats {
				fits = false
				break
			}
		}
		if fits {
			return n
		}
	}
	return 0
}
