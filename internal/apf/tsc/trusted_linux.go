package tsc

import (
	"fmt"
	"os"
	"runtime"
	"strings"
)

// clocksourcePath names the kernel's current clocksource.
const clocksourcePath = "/sys/devices/system/clocksource/clocksource0/current_clocksource"

// trusted reports why the counter must not be used, or nil.
func trusted() error {
	if runtime.GOARCH != "amd64" {
		return errUnsupported
	}
	b, err := os.ReadFile(clocksourcePath)
	if err != nil {
		return fmt.Errorf("tsc: cannot tell whether the kernel trusts the counter: %w", err)
	}
	return trustedSource(string(b))
}

// trustedSource reports whether the kernel clocksource named by the contents of
// clocksourcePath is the TSC.
func trustedSource(contents string) error {
	if src := strings.TrimSpace(contents); src != "tsc" {
		return fmt.Errorf("tsc: the kernel's clocksource is %q, not tsc", src)
	}
	return nil
}
