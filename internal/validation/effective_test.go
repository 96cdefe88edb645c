package validation_test

import (
	"testing"

	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/validation"
)

// TestBackstopNamesAgree guards the constants this package repeats from internal/apf/effective
// (which imports this package, so this package cannot import it): admission must resolve a
// reference to the exempt backstop exactly as the filter does.
func TestBackstopNamesAgree(t *testing.T) {
	if validation.BackstopExemptName != effective.BackstopExemptName {
		t.Errorf("BackstopExemptName = %q, effective says %q", validation.BackstopExemptName, effective.BackstopExemptName)
	}
	if validation.MastersGroup != effective.MastersGroup {
		t.Errorf("MastersGroup = %q, effective says %q", validation.MastersGroup, effective.MastersGroup)
	}
}
