package tsc

import (
	"fmt"
	"os"
	"runtime"
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
