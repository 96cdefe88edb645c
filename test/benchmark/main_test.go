package benchmark

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// clocksourceFile names the kernel's current clocksource on Linux.
const clocksourceFile = "/sys/devices/system/clocksource/clocksource0/current_clocksource"

// TestMain prints the kernel's clocksource as a benchmark configuration line
// ("clocksource: kvm-clock"), which cmd/benchtable shows above its table: a system clock read
// costs several times more with kvm-clock than with tsc, so the figures depend on it.
func TestMain(m *testing.M) {
	fmt.Printf("clocksource: %s\n", Clocksource())
	os.Exit(m.Run())
}

// Clocksource returns the kernel's current clocksource, or "unknown" where it cannot be read.
func Clocksource() string {
	b, err := os.ReadFile(clocksourceFile)
	if s := strings.TrimSpace(string(b)); err == nil && s != "" {
		return s
	}
	return "unknown"
}
