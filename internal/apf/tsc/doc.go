// Package tsc measures elapsed time with the processor's time-stamp counter (TSC), for the
// flow-control dispatcher, which takes two readings per request.
//
// On the amd64 virtual machines the benchmarks run on, a TSC reading (one RDTSC instruction
// and a multiplication) costs about 11 ns, against about 31 ns for time.Since: Go reads the
// system clock through the kernel's vDSO on the system stack. The clock has the counter's
// resolution (well under a nanosecond) and is exact to the calibration error below, so it
// changes no behaviour of the dispatcher; it is only cheaper.
//
// # When it is used
//
// Default returns a clock only where the counter is as good as the system clock: on amd64
// Linux whose kernel uses the TSC as its own clocksource
// (/sys/devices/system/clocksource/clocksource0/current_clocksource is "tsc"). The kernel
// selects it only after checking that the counter is invariant (constant rate, not stopped
// in idle states) and synchronized across CPUs, and it switches away (to hpet, kvm-clock,
// ...) when its watchdog finds otherwise. Everywhere else Default reports why not, and the
// dispatcher reads the system clock.
//
// # Accuracy
//
// Default calibrates the counter once per process against the system's monotonic clock over
// about 20 ms, taking each reference reading between two counter readings and keeping the
// tightest of several; the rate is then within a few parts per million. The monotonic clock
// itself may be slewed by NTP (at most 500 ppm), which the counter is not, so over an hour
// the two may drift apart by up to a couple of seconds. Everything the dispatcher measures
// is a difference of readings (service and wait times, the wait limit, the advance of
// virtual time), so that drift is an error of at most 0.05% of each measured duration.
package tsc
