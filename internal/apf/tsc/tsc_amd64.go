package tsc

// ticks returns the time-stamp counter (RDTSC). It is not serializing: the reading may be
// taken a few instructions early or late, which is far below anything the dispatcher measures.
func ticks() int64
