package autopilot

import "sort"

// transfer decides each level's move (by index of assessed, sorted by name). First the
// pressured levels below their configured shares take them back (reclaim); then the pressured
// levels gain what the slack levels give, min(total need, total give), each side split in
// proportion to what its levels ask (largest remainder, ties by name). A move smaller than
// Config.MinChangePercent of a level's shares is dropped, the level leaves the transfer and
// the split is made again, so the moves always sum to zero; except in a transfer that gives
// shares to a level that rejected requests: rejections are not noise, and a donor with many
// shares must not keep them from a receiver with few because its give is a small part of them.
//
// dropped holds, for each level whose move was dropped, the move it was offered.
func transfer(cfg Config, assessed []assessment) (moves, dropped []int32) {
	amounts, deficit, excess := make([]int32, len(assessed)), make([]int32, len(assessed)), make([]int32, len(assessed))
	for i, a := range assessed {
		amounts[i], deficit[i], excess[i] = a.amount, a.deficit, a.excess
	}
	dropped = make([]int32, len(assessed))
	for {
		moves = reclaim(assessed, deficit, excess)
		left := append([]int32(nil), amounts...)
		for i, m := range moves {
			if m != 0 && (assessed[i].band == pressured) == (m > 0) {
				left[i] = max(left[i]-abs32(m), 0) // a reclaim move is part of what it asked for
			}
		}
		for i, m := range split(assessed, left) {
			moves[i] += m
		}
		if relievesRejections(assessed, moves) {
			return moves, dropped
		}
		again := false
		for i, m := range moves {
			if m != 0 && tooSmall(cfg, assessed[i].level.Shares, m) {
				amounts[i], deficit[i], excess[i], dropped[i] = 0, 0, 0, m
				again = true
			}
		}
		if !again {
			return moves, dropped
		}
	}
}

// reclaim is what the pressured levels below their configured shares take back, up to their
// configured shares and without a step limit, from the levels above theirs, whatever those
// levels' own pressure: each side split in proportion to its deficit or excess.
// Git's configured shares are each level's due when levels compete: a level lends what it
// does not use, and gets it back when it needs it, even from a level that now uses it (or
// floods its own level to look as if it did); it never takes more than its configured shares
// this way, so two levels cannot take the same shares back and forth. A level that must
// never lend sets minShares to its configured shares.
func reclaim(assessed []assessment, deficit, excess []int32) []int32 {
	moves := make([]int32, len(assessed))
	var up, down []int
	var need, give int64
	for i := range assessed {
		switch {
		case deficit[i] > 0:
			up, need = append(up, i), need+int64(deficit[i])
		case excess[i] > 0:
			down, give = append(down, i), give+int64(excess[i])
		}
	}
	total := min(need, give)
	if total == 0 {
		return moves
	}
	for i, v := range largestRemainder(total, up, deficit) {
		moves[i] += v
	}
	for i, v := range largestRemainder(total, down, excess) {
		moves[i] -= v
	}
	return moves
}

// relievesRejections reports whether moves give shares to a level that rejected requests.
func relievesRejections(assessed []assessment, moves []int32) bool {
	for i, a := range assessed {
		if moves[i] > 0 && a.demand.Rejected > 0 {
			return true
		}
	}
	return false
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
