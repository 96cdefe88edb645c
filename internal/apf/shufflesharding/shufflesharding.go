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

// Hash returns the 64-bit flow hash of (schema, distinguisher): the schema name and the
// distinguisher are each hashed by StringHash, and the two hashes are folded together (see
// FlowHasher). StringHash reads a string 8 bytes at a time and folds each 64x64-bit product's
// halves together, in the manner of wyhash's short-input path, so that every bit of the result
// depends on every input bit. The function has no random seed: it is deterministic across
// processes and machines (all API servers, and apf-operator explain, deal the same hands),
// and it allocates nothing.
func Hash(schema, distinguisher string) uint64 {
	return NewFlowHasher(schema).Hash(distinguisher)
}

// Mixing constants (those of wyhash): odd, with balanced bits.
const (
	k0 = 0xa0761d6478bd642f
	k1 = 0xe7037ed1a0b428db
	k2 = 0x8ebc6af09c88c6e3
)

// stringSeed is StringHash's seed, premix(k2).
var stringSeed = premix(k2)

// StringHash is the hash Hash applies to a distinguisher (and to the schema name). A caller
// that hashes a string for its own purpose with it, and then needs the flow hash of that
// string as a distinguisher, gets it from FlowHasher.Combine without hashing the string again.
func StringHash(s string) uint64 { return hashString(stringSeed, s) }

// FlowHasher is the state of Hash after the schema name: the flows of one FlowSchema hash
// only their distinguishers, with Hash(s, d) == NewFlowHasher(s).Hash(d).
type FlowHasher uint64

// NewFlowHasher hashes the schema name into the seed its distinguishers' hashes are folded
// with. StringHash covers the length of the name too, so ("ab", "c") and ("a", "bc") differ.
func NewFlowHasher(schema string) FlowHasher {
	return FlowHasher(premix(StringHash(schema)))
}

// Hash returns the flow hash of the schema's flow with the given distinguisher.
func (f FlowHasher) Hash(distinguisher string) uint64 {
	return f.Combine(StringHash(distinguisher))
}

// Combine returns the flow hash of the schema's flow whose distinguisher has the StringHash h:
// Combine(StringHash(d)) == Hash(d).
func (f FlowHasher) Combine(h uint64) uint64 {
	return mix(h^k0, uint64(f)^k1)
}

// premix spreads a seed over all bits before hashString uses it.
func premix(seed uint64) uint64 { return seed ^ mix(seed^k0, k1) }

// hashString hashes s with a premixed seed. Strings of up to 16 bytes take two loads that
// together cover every byte (overlapping when shorter than 16), so for a given length the
// pair of words determines s; longer strings are first folded 16 bytes at a time.
func hashString(seed uint64, s string) uint64 {
	n := len(s)
	var a, b uint64
	switch {
	case n > 16:
		for i := 0; n-i > 16; i += 16 {
			seed = mix(load64(s[i:])^k1, load64(s[i+8:])^seed)
		}
		a, b = load64(s[n-16:]), load64(s[n-8:])
	case n >= 8:
		a, b = load64(s), load64(s[n-8:])
	case n >= 4:
		a, b = load32(s), load32(s[n-4:])
	case n > 0:
		a = uint64(s[0])<<16 | uint64(s[n>>1])<<8 | uint64(s[n-1])
	}
	hi, lo := bits.Mul64(a^k1, b^seed)
	return mix(lo^k0^uint64(n), hi^k1)
}

// mix multiplies a and b into 128 bits and folds the halves together.
func mix(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// load64 reads the first 8 bytes of s, little-endian (the compiler merges the byte loads).
func load64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// load32 reads the first 4 bytes of s, little-endian.
func load32(s string) uint64 {
	_ = s[3]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24
}
