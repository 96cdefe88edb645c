package sim

import (
	"math"
	"math/rand/v2"
	"time"
)

// serviceSigma is the lognormal service time's sigma (of the log): a p99 about 3x the median.
const serviceSigma = 0.5

// source draws one level's requests: a non-homogeneous Poisson process of rate spec.Rate
// (drawn at spec.Peak and thinned, Lewis and Shedler 1979) and a lognormal service time for
// each, all from the level's own PCG stream, so every policy sees the same requests.
type source struct {
	level int
	spec  *LevelSpec
	rng   *rand.Rand
	mu    float64 // of the service time's log
	flow  int
	// next is the next arrival's time and service its service time; next > end when done.
	next, service time.Duration
	end           time.Duration
}

func newSource(seed uint64, level int, spec *LevelSpec, end time.Duration) *source {
	s := &source{level: level, spec: spec, end: end,
		rng: rand.New(rand.NewPCG(seed, uint64(level)+1)),
		mu:  math.Log(spec.MeanService.Seconds()) - serviceSigma*serviceSigma/2}
	s.advance(0)
	return s
}

// advance draws the arrival after from.
func (s *source) advance(from time.Duration) {
	peak := s.spec.Peak
	if peak <= 0 {
		s.next = s.end + 1
		return
	}
	t := from.Seconds()
	for {
		t += s.rng.ExpFloat64() / peak
		if t > s.end.Seconds() {
			s.next = s.end + 1
			return
		}
		at := time.Duration(t * float64(time.Second))
		if s.rng.Float64()*peak < s.spec.Rate(at) {
			s.next = at
			s.service = time.Duration(math.Exp(s.mu+serviceSigma*s.rng.NormFloat64()) * float64(time.Second))
			s.service = max(s.service, time.Microsecond)
			return
		}
	}
}

// nextFlow returns the flow (user index) of the next request, round robin.
func (s *source) nextFlow() int {
	f := s.flow
	s.flow = (s.flow + 1) % max(s.spec.Flows, 1)
	return f
}
