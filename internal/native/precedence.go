package native

// assignPrecedences gives n ordered FlowSchemas distinct, increasing precedences in [lo, hi].
// previous[i] is the precedence schema i had (0: none); each is kept while it still fits the
// order with room for the schemas around it, so inserting or removing one schema changes no
// other. The others are spread evenly over the gaps. It returns fewer than n precedences when
// [lo, hi] is too small (none when it is empty, lo > hi): the schemas past the end get none.
func assignPrecedences(previous []int32, lo, hi int32) []int32 {
	n := len(previous)
	if capacity := max(int(hi)-int(lo)+1, 0); n > capacity {
		n = capacity
	}
	out := make([]int32, n)
	last, pending := lo-1, 0 // last kept precedence; schemas since it still without one
	for i := 0; i < n; i++ {
		p := previous[i]
		if p >= lo && p > last+int32(pending) && p <= hi-int32(n-1-i) {
			fill(out[i-pending:i], last, p)
			out[i], last, pending = p, p, 0
			continue
		}
		pending++
	}
	fill(out[n-pending:], last, hi+1)
	return out
}

// fill spreads len(dst) precedences evenly strictly between a and b (b-a > len(dst)).
func fill(dst []int32, a, b int32) {
	k := int64(len(dst))
	for j := range dst {
		dst[j] = a + int32(int64(j+1)*int64(b-a)/(k+1))
	}
}
