package main

import (
	"testing"
)

// TestEventRateLimitOffByDefault: without --enable-event-rate-limit the manager makes no events
// engine, so it neither serves the events webhook nor enforces EventRateLimit objects; with
// it, it does.
func TestEventRateLimitOffByDefault(t *testing.T) {
	f, err := parseManagerFlags([]string{"--leader-elect=false", "--namespace=x"})
	if err != nil {
		t.Fatal(err)
	}
	if e, err := f.eventRateLimitEngine(); e != nil || err != nil {
		t.Fatalf("default flags: engine %v, error %v; want none", e, err)
	}
	f, err = parseManagerFlags([]string{"--leader-elect=false", "--namespace=x", "--enable-event-rate-limit"})
	if err != nil {
		t.Fatal(err)
	}
	if e, err := f.eventRateLimitEngine(); e == nil || err != nil {
		t.Fatalf("--enable-event-rate-limit: engine %v, error %v; want one", e, err)
	}
}
