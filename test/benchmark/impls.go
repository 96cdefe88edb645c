package benchmark

import "fmt"

// Factory builds one implementation.
type Factory struct {
	// Name is the impl= value in benchmark names.
	Name string
	// New builds the implementation for cfg.
	New func(cfg Config) (Impl, error)
	// OverloadSCL is the server concurrency limit that gives OverloadConfig's single level
	// exactly seats seats in this implementation.
	OverloadSCL func(seats int) int
}

// Factories lists the implementations compared, this project's engine first.
func Factories() []Factory {
	return []Factory{
		{Name: "ours", New: newOursImpl, OverloadSCL: oursOverloadSCL},
		{Name: "upstream", New: func(cfg Config) (Impl, error) { return NewUpstream(cfg) }, OverloadSCL: upstreamOverloadSCL},
		{Name: "semaphore", New: func(cfg Config) (Impl, error) { return NewSemaphore(cfg.ServerConcurrencyLimit), nil },
			OverloadSCL: func(seats int) int { return seats }},
	}
}

// upstreamCatchAllShares is the nominal concurrency shares of upstream's mandatory catch-all
// level; the mandatory exempt level has 0.
const upstreamCatchAllShares = 5

// upstreamOverloadSCL: upstream gives a level ceil(SCL * shares / sum of all levels' shares)
// seats and lets it borrow none here (every lendablePercent is 0), so with OverloadConfig's one
// level of standardShares plus the catch-all, SCL = seats * (shares + 5) / shares.
func upstreamOverloadSCL(seats int) int {
	total := standardShares + upstreamCatchAllShares
	if seats*total%standardShares != 0 {
		panic(fmt.Sprintf("upstream cannot give exactly %d seats to a level of %d shares out of %d", seats, standardShares, total))
	}
	return seats * total / standardShares
}

// oursOverloadSCL: OverloadConfig has one non-exempt level, and the proposal's dispatching is
// work-conserving (when no level below its ACV waits, the highest level with a waiting request
// is served), so that level gets every seat of the server.
func oursOverloadSCL(seats int) int { return seats }
