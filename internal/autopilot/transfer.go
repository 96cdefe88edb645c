package autopilot

import "sort"

// transfer decides each level's move (by index of assessed, sorted by name): the pressured
// levels gain what the slack levels give, min(total need, total give), each side split in
// proportion to what its levels ask (largest remainder, ties by name). A move smaller than
// Config.MinChangePercent of a level's shares is dropped, the level leaves the transfer and
// the split is made again, so the moves always sum to zero.
//
// dropped holds, for each level whose move was dropped, the move it was offered.
func transfer(cfg Config, assessed []assessment) (moves, dropped []int32) {
	amounts := make([]int32, len(assessed))
	for i, a := range assessed {
		amounts[i] = a.amount
	}
	dropped = make([]int32, len(assessed))
	for {
		moves = split(assessed, amounts)
		again := false
		for i, m := range moves {
			if m != 0 && tooSmall(cfg, assessed[i].level.Shares, m) {
				amounts[i], dropped[i] = 0, m
				again = true
			}
		}
		if !again {
			return moves, dropped
		}
	}
}

// tooSmall reports whether moving shares by m is below Config.MinChangePercent of them.
func tooSmall(cfg Config, shares, m int32) bool {
	if m < 0 {
		m = -m
	}
	return float64(m)*100 < cfg.MinChangePercent*float64(shares)
}

// split moves min(total need, total give) from the slack levels to the pressured ones.
func split(assessed []assessment, amounts []int32) []int32 {
	var up, down []int
	var need, give int64
	for i, a := range assessed {
		switch {
		case amounts[i] <= 0:
		case a.band == pressured:
			up, need = append(up, i), need+int64(amounts[i])
		case a.band == slack:
			down, give = append(down, i), give+int64(amounts[i])
		}
	}
	moves := make([]int32, len(assessed))
	total := min(need, give)
	if total == 0 {
		return moves
	}
	for i, v := range largestRemainder(total, up, amounts) {
		moves[i] += v
	}
	for i, v := range largestRemainder(total, down, amounts) {
		moves[i] -= v
	}
	return moves
}

// largestRemainder splits total over idx in proportion to amounts[idx] (total <= their sum):
// each gets the floor of its exact part, the units left go to the largest fractional parts
// (ties to the earlier index, that is the earlier name). No level gets more than it asked.
func largestRemainder(total int64, idx []int, amounts []int32) map[int]int32 {
	var sum int64
	for _, i := range idx {
		sum += int64(amounts[i])
	}
	out := make(map[int]int32, len(idx))
	rems := make([]int64, len(idx))
	left := total
	for k, i := range idx {
		exact := total * int64(amounts[i])
		out[i] = int32(exact / sum)
		rems[k] = exact % sum
		left -= exact / sum
	}
	order := make([]int, len(idx))
	for k := range order {
		order[k] = k
	}
	sort.SliceStable(order, func(a, b int) bool { return rems[order[a]] > rems[order[b]] })
	for _, k := range order[:left] {
		out[idx[k]]++
	}
	return out
}
