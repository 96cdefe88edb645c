package validation

import (
	"context"
	"encoding/json"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

// FuzzValidators decodes arbitrary JSON into both kinds and runs every validator on the
// result: none may panic, whatever the object holds.
func FuzzValidators(f *testing.F) {
	for _, seed := range []string{
		`{"metadata":{"name":"a"},"spec":{"priorityLevel":1000,"assuredConcurrencyShares":10,"queuesPerWidth":64,"handSize":12,"queueLengthLimit":1}}`,
		`{"spec":{"priorityLevel":5,"queuesPerWidth":4096,"handSize":64}}`,
		`{"spec":{"priorityLevel":0,"handSize":-3,"queuesPerWidth":-2147483648}}`,
		`{"spec":{"matchingPriority":1,"requestPriority":{"name":"system-top"},"flowDistinguisher":{"source":"namespace","transformation":{"regex":"(a"}},"match":[{"and":[{"equals":{"field":"groups"},"superSet":{"field":"user","set":[]}}]}]}}`,
		`{"spec":{"requestPriority":{"name":"x"},"match":[{}, {"and":[{}]}, {"and":[{"patternMatch":{"field":"resource","pattern":"(?i)x{1000}"}}]}]}}`,
		`{"spec":null}`,
	} {
		f.Add([]byte(seed), []byte(seed))
	}
	f.Fuzz(func(t *testing.T, rpJSON, fsJSON []byte) {
		rp, fs := &v1alpha1.RequestPriority{}, &v1alpha1.FlowSchema{}
		_ = json.Unmarshal(rpJSON, rp)
		_ = json.Unmarshal(fsJSON, fs)
		// The FlowSchema refers to the RequestPriority so the pair rules run too.
		fs.Spec.RequestPriority.Name = rp.Name
		runAll(t, rp, fs)
		// And through the backstop exempt level.
		fs.Spec.RequestPriority.Name = BackstopExemptName
		runAll(t, rp, fs)
	})
}

func runAll(t *testing.T, rp *v1alpha1.RequestPriority, fs *v1alpha1.FlowSchema) {
	ctx := context.Background()
	_ = RequestPrioritySpec(&rp.Spec, specPath)
	_, _ = FlowSchemaSpec(&fs.Spec, specPath)
	_, _ = FlowSchemaAgainstPriority(&fs.Spec, &rp.Spec, specPath)
	_, _ = FlowSchemaAgainstPriority(&fs.Spec, nil, specPath)
	for _, c := range fs.Spec.Match {
		_ = ResourceOnly(c)
	}
	others := NewSet([]*v1alpha1.RequestPriority{rp}, []*v1alpha1.FlowSchema{fs})
	empty := NewSet(nil, nil)
	for _, set := range []*Set{others, empty} {
		for _, old := range []*v1alpha1.RequestPriority{nil, rp} {
			if _, _, err := RequestPriority(ctx, old, rp, set); err != nil {
				t.Fatal(err)
			}
		}
		for _, old := range []*v1alpha1.FlowSchema{nil, fs} {
			if _, _, err := FlowSchema(ctx, old, fs, set); err != nil {
				t.Fatal(err)
			}
			if _, err := DefaultExemptAccess().FlowSchema(ctx, authenticationv1.UserInfo{Username: "u"}, old, fs, set); err != nil {
				t.Fatal(err)
			}
		}
		_ = DefaultExemptAccess().RequestPriority(authenticationv1.UserInfo{}, rp, rp)
	}
}
