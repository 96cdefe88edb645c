package fairqueue

// Dealing a hand costs a division by the number of remaining queues per card: with 6 cards,
// over 100 ns on the benchmark machines, as much as the rest of the uncontended path, and it is
// needed whenever a flow's first card is busy. A flow sends request after request, so the set
// remembers the hands of recent flows in a small direct-mapped table; a hand depends on the
// flow hash alone, so a remembered hand is the one dealing would give.

// handCacheSize is the number of remembered hands, a power of two.
const handCacheSize = 256

// maxCachedHand is the largest hand remembered; larger hands are dealt every time.
const maxCachedHand = 8

// cachedHand is one remembered hand.
type cachedHand struct {
	hash  uint64
	valid bool
	cards [maxCachedHand]uint16
}

// newHandCache returns the table for cfg, or nil when its hands are not remembered.
func newHandCache(cfg Config) []cachedHand {
	if cfg.QueuesPerWidth <= 1 || cfg.HandSize > maxCachedHand || cfg.QueuesPerWidth > 1<<16 {
		return nil
	}
	return make([]cachedHand, handCacheSize)
}

// cachedHandOf returns the hand of flowHash, dealing and remembering it if it is not in the
// table. The set has a table (s.hands != nil).
func (s *QueueSet) cachedHandOf(flowHash uint64) []uint16 {
	e := &s.hands[(flowHash*0x9E3779B97F4A7C15)>>56] // the top 8 bits: handCacheSize slots
	if !e.valid || e.hash != flowHash {
		n := 0
		s.dealer.Deal(flowHash, func(i int) {
			e.cards[n] = uint16(i)
			n++
		})
		e.hash, e.valid = flowHash, true
	}
	return e.cards[:s.cfg.HandSize]
}

// shortestOfHand returns the index of the first shortest queue of the flow's hand among qs.
func (s *QueueSet) shortestOfHand(qs []queue, flowHash uint64) int {
	best, bestLen := 0, -1
	if s.hands == nil {
		s.dealer.Deal(flowHash, func(i int) {
			if l := qs[i].length(); bestLen < 0 || l < bestLen {
				best, bestLen = i, l
			}
		})
		return best
	}
	for _, c := range s.cachedHandOf(flowHash) {
		if l := qs[c].length(); bestLen < 0 || l < bestLen {
			best, bestLen = int(c), l
		}
	}
	return best
}
