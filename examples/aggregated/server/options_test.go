package server

import (
	"strings"
	"testing"
)

func TestOptionsValidate(t *testing.T) {
	good := Options{ConcurrencyLimit: 1, BindPort: 443}
	if err := good.validate(); err != nil {
		t.Fatalf("valid options refused: %v", err)
	}
	cases := map[string]func(*Options){
		"--concurrency-limit":    func(o *Options) { o.ConcurrencyLimit = 0 },
		"--list-delay":           func(o *Options) { o.ListDelay = -1 },
		"--tls-private-key-file": func(o *Options) { o.ServingCertFile = "tls.crt" },
		"--listen":               func(o *Options) { o.BindPort = 0 },
	}
	for flag, breakIt := range cases {
		o := good
		breakIt(&o)
		if err := o.validate(); err == nil || !strings.Contains(err.Error(), flag) {
			t.Errorf("%s broken: got %v, want an error naming it", flag, err)
		}
	}
}
