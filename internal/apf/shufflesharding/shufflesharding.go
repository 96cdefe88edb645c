// Package shufflesharding deals a flow its hand of queues, exactly as the API Priority and
// Fairness proposal describes in "Assignment to a Queue".
//
// A flow, identified by its FlowSchema name and flow distinguisher, is hashed to a 64-bit value
// V. V is decoded in the falling-factorial number system into coefficients
// A[0] in [0, N), A[1] in [0, N-1), ..., A[H-1] in [0, N-H+1) (N queues, hand size H), so that
// V = sum A[i] * ff(N, i) + A[H] * ff(N, H), where ff(N, M) = N!/(N-M)!. Queue index I[0] is
// A[0]; I[i] is the A[i]-th entry of the queue indices that remain after removing
// I[0..i-1]. The hand is therefore H distinct queues.
//
// The configuration must keep ff(N, H) below 2^60 so that the coefficients stay nearly
// uniform. Admission (internal/validation) and the engine both call FallingFactorial, so they
// cannot disagree about which hand sizes are allowed.
package shufflesharding

import (
	"fmt"
	"math/bits"
)

// MaxFallingFactorial is the exclusive upper bound on ff(queues, handSize): 2^60.
const MaxFallingFactorial uint64 = 1 << 60

// MaxHandSize is the largest hand a Dealer accepts; a larger hand could not satisfy the
// 2^60 bound with at least handSize queues anyway (ff(64, 64) = 64! is far above 2^60).
const MaxHandSize = 64

// FallingFactorial returns ff(n, k) = n * (n-1) * ... * (n-k+1) and whether it is below
// MaxFallingFactorial. It never overflows: once a partial product reaches 2^60 it stops and
// returns that partial product with ok == false (the exact value is then at least that large).
// It requires 0 <= k <= n.
func FallingFactorial(n, k int) (ff uint64, ok bool) {
	ff = 1
	for i := 0; i < k; i++ {
		hi, lo := bits.Mul64(ff, uint64(n-i))
		if hi != 0 || lo >= MaxFallingFactorial {
			if hi != 0 {
				return ^uint64(0), false
			}
			return lo, false
		}
		ff = lo
	}
	return ff, true
}

// ValidateHandSize reports why a (queues, handSize) pair cannot be dealt, or nil. The message
// names the computed figure and the fix, for admission errors.
func ValidateHandSize(queues, handSize int) error {
	switch {
	case queues < 1:
		return fmt.Errorf("queuesPerWidth must be at least 1")
	case handSize < 1:
		return fmt.Errorf("handSize must be at least 1")
	case handSize > queues:
		return fmt.Errorf("handSize %d exceeds queuesPerWidth %d; lower handSize or raise queuesPerWidth", handSize, queues)
	case handSize > MaxHandSize:
		return fmt.Errorf("handSize %d exceeds %d; lower handSize", handSize, MaxHandSize)
	}
	if ff, ok := FallingFactorial(queues, handSize); !ok {
		if ff == ^uint64(0) {
			return fmt.Errorf("ff(queuesPerWidth=%d, handSize=%d) overflows 64 bits, >= 2^60; lower handSize or queuesPerWidth", queues, handSize)
		}
		return fmt.Errorf("ff(queuesPerWidth=%d, handSize=%d) >= %d (a partial product) >= 2^60; lower handSize or queuesPerWidth", queues, handSize, ff)
	}
	return nil
}

// Dealer deals hands of a fixed size from a fixed number of queues. It is immutable and safe
// for concurrent use.
type Dealer struct {
	queues   int
	handSize int
}

// NewDealer returns a Dealer for the given number of queues and hand size, or the reason the
// pair is not allowed (see ValidateHandSize).
func NewDealer(queues, handSize int) (*Dealer, error) {
	if err := ValidateHandSize(queues, handSize); err != nil {
		return nil, err
	}
	return &Dealer{queues: queues, handSize: handSize}, nil
}

// Queues returns the number of queues the Dealer deals from.
func (d *Dealer) Queues() int { return d.queues }

// HandSize returns the number of queues in each hand.
func (d *Dealer) HandSize() int { return d.handSize }

// Deal decodes hashValue into the hand and calls pick with each queue index, in dealing order.
// It allocates nothing.
func (d *Dealer) Deal(hashValue uint64, pick func(queue int)) {
	var chosen [MaxHandSize]int // chosen[:i] sorted ascending
	remaining := uint64(d.queues)
	for i := 0; i < d.handSize; i++ {
		idx := int(hashValue % remaining)
		hashValue /= remaining
		remaining--
		// idx is the idx-th entry of the queue indices not yet chosen: step over every
		// chosen index at or below it, in ascending order.
		pos := 0
		for ; pos < i && chosen[pos] <= idx; pos++ {
			idx++
		}
		copy(chosen[pos+1:i+1], chosen[pos:i])
		chosen[pos] = idx
		pick(idx)
	}
}

// DealIntoHand appends the hand for hashValue to hand and returns it; with a hand of capacity
// HandSize() it allocates nothing.
func (d *Dealer) DealIntoHand(hashValue uint64, hand []int) []int {
	d.Deal(hashValue, func(q int) { hand = append(hand, q) })
	return hand
}

// Hash returns the 64-bit flow hash of (schema, distinguisher): FNV-1a over both strings with a
// separator byte, then a 64-bit finalizer so that every bit of the result depends on every
// input bit. It is deterministic across processes (all API servers deal the same hands) and
// allocates nothing.
func Hash(schema, distinguisher string) uint64 {
	return NewFlowHasher(schema).Hash(distinguisher)
}

// FNV-1a parameters.
const (
	offset64 = 14695981039346656037
	prime64  = 1099511628211
)

// FlowHasher is the state of Hash after the schema name: the flows of one FlowSchema hash
// only their distinguishers, with Hash(s, d) == NewFlowHasher(s).Hash(d).
type FlowHasher uint64

// NewFlowHasher hashes the schema name and the separator.
func NewFlowHasher(schema string) FlowHasher {
	h := uint64(offset64)
	for i := 0; i < len(schema); i++ {
		h ^= uint64(schema[i])
		h *= prime64
	}
	h ^= 0xff // cannot occur in UTF-8, so ("ab","c") and ("a","bc") differ
	h *= prime64
	return FlowHasher(h)
}

// Hash returns the flow hash of the schema's flow with the given distinguisher.
func (f FlowHasher) Hash(distinguisher string) uint64 {
	h := uint64(f)
	for i := 0; i < len(distinguisher); i++ {
		h ^= uint64(distinguisher[i])
		h *= prime64
	}
	// fmix64 from MurmurHash3.
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}
