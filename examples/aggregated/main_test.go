package main

import (
	"strings"
	"testing"
	"time"
)

func TestParseFlags(t *testing.T) {
	opts, err := parseFlags([]string{"--kubeconfig", "kc", "--listen", "127.0.0.1:9443",
		"--concurrency-limit", "4", "--list-delay", "250ms"})
	if err != nil {
		t.Fatal(err)
	}
	if opts.Kubeconfig != "kc" || opts.BindAddress.String() != "127.0.0.1" || opts.BindPort != 9443 ||
		opts.ConcurrencyLimit != 4 || opts.ListDelay != 250*time.Millisecond {
		t.Errorf("got %+v", opts)
	}
}

func TestParseFlagsRejects(t *testing.T) {
	for args, want := range map[string]string{
		"--listen 9443":           "host:port",
		"--listen 127.0.0.1:http": "port is not a number",
		"--listen example.com:1":  "not an IP address",
	} {
		if _, err := parseFlags(strings.Fields(args)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an error with %q", args, err, want)
		}
	}
}
