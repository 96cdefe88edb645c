package controllers

import (
	"context"
	"fmt"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apf-operator/apf-operator/internal/native"
)

// TestEnforcementNoneRestoresDonors: an operator with enforcement none gives the levels an
// earlier native run carved shares from back their recorded shares and annotation, at start
// and when such a level appears later.
func TestEnforcementNoneRestoresDonors(t *testing.T) {
	resetCluster(t)
	donor := func(name string) *flowcontrolv1.PriorityLevelConfiguration {
		plc := &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
				Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: ptr.To[int32](50),
					LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject}}}}
		return native.TakeOver(plc, 20)
	}
	first, later := donor("carved-first"), donor("carved-later")
	create(t, first)
	t.Cleanup(func() { remove(t, first); remove(t, later) })
	startOperator(t, operatorConfig{options: Options{Enforcement: EnforcementNone, Clock: realClock}})
	waitRestored(t, first.Name)
	create(t, later)
	waitRestored(t, later.Name)
}

// waitRestored waits until the named level holds its 50 shares again, without the operator's
// records or an autoupdate-spec annotation (it had none).
func waitRestored(t testing.TB, name string) {
	t.Helper()
	eventually(t, func() error {
		var plc flowcontrolv1.PriorityLevelConfiguration
		if err := k8s.Get(context.Background(), client.ObjectKey{Name: name}, &plc); err != nil {
			return err
		}
		if got := *plc.Spec.Limited.NominalConcurrencyShares; got != 50 || len(plc.Annotations) != 0 {
			return fmt.Errorf("%s: %d shares, annotations %v; want 50 and none", name, got, plc.Annotations)
		}
		return nil
	})
}
