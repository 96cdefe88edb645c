package explain

import (
	"fmt"

	"github.com/apf-operator/apf-operator/internal/apf"
	"github.com/apf-operator/apf-operator/internal/apf/classify"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apf/request"
)

// Explanation is the classification of one request, for people (WriteText) and tools (JSON).
type Explanation struct {
	Request         request.Attributes `json:"request"`
	FlowSchema      string             `json:"flowSchema"`
	Backstop        bool               `json:"backstop"`
	Conjunction     int                `json:"conjunction"`
	RequestPriority PriorityInfo       `json:"requestPriority"`
	Distinguisher   string             `json:"distinguisher"`
	Width           int                `json:"width"`
	LongRunning     bool               `json:"longRunning"`
	FlowHash        string             `json:"flowHash"`
	Hand            []int              `json:"hand,omitempty"`
}

// PriorityInfo describes the effective RequestPriority of a request.
type PriorityInfo struct {
	Name             string  `json:"name"`
	Level            int32   `json:"level"`
	Backstop         bool    `json:"backstop"`
	Exempt           bool    `json:"exempt"`
	Shares           int32   `json:"assuredConcurrencyShares,omitempty"`
	AssuredFraction  float64 `json:"assuredConcurrencyFraction,omitempty"`
	QueuesPerWidth   int32   `json:"queuesPerWidth,omitempty"`
	HandSize         int32   `json:"handSize,omitempty"`
	QueueLengthLimit int32   `json:"queueLengthLimit,omitempty"`
}

// Explain classifies a with the operator's in-process classifier (internal/apf's effective
// configuration, classifier and shuffle sharding): the answer of the in-process filter for
// servers built on k8s.io/apiserver, which nothing in a cluster with native enforcement runs.
func Explain(cfg *effective.Config, a *request.Attributes) *Explanation {
	var r classify.Result
	classify.Compile(cfg).Classify(a, &r)
	p := r.Schema.Priority
	e := &Explanation{
		Request: *a, FlowSchema: r.Schema.Name, Backstop: r.Schema.Backstop, Conjunction: r.Conjunction,
		RequestPriority: PriorityInfo{Name: p.Name, Level: p.Level, Backstop: p.Backstop, Exempt: p.Exempt(),
			Shares: p.Shares, AssuredFraction: cfg.AssuredFraction(p), QueuesPerWidth: p.QueuesPerWidth,
			HandSize: p.HandSize, QueueLengthLimit: p.QueueLengthLimit},
		Distinguisher: r.Distinguisher, Width: r.Width, LongRunning: r.LongRunning,
		FlowHash: fmt.Sprintf("%#016x", r.FlowHash),
	}
	e.Hand = apf.Hand(p, r.FlowHash)
	return e
}
