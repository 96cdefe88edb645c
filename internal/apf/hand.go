package apf

import (
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apf/shufflesharding"
)

// Hand returns the queues of level p dealt to the flow of flowHash, among the level's queues of
// one width: all of one queue, or the shuffle-sharding hand; nil for the exempt level. A
// request joins the shortest queue of its hand.
func Hand(p *effective.Priority, flowHash uint64) []int {
	switch {
	case p == nil || p.Exempt():
		return nil
	case p.QueuesPerWidth <= 1:
		return []int{0}
	}
	d, err := shufflesharding.NewDealer(int(p.QueuesPerWidth), int(p.HandSize))
	if err != nil {
		return nil // effective.Compute admits no such level
	}
	return d.DealIntoHand(flowHash, nil)
}
