package importer

import (
	"encoding/json"
	"fmt"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	flowcontrolv1beta1 "k8s.io/api/flowcontrol/v1beta1"
	flowcontrolv1beta2 "k8s.io/api/flowcontrol/v1beta2"
	flowcontrolv1beta3 "k8s.io/api/flowcontrol/v1beta3"
)

// The versions of flowcontrol.apiserver.k8s.io that import reads. Each object is decoded
// strictly at its own version (k8s.io/api's typed structs) and converted to v1 as
// kube-apiserver converts it: k8s.io/kubernetes pkg/apis/flowcontrol/<version>/conversion.go
// and defaults.go (read at v1.36.3). The FlowSchema and the queuing fields are the same in
// every version; a PriorityLevelConfiguration's shares differ:
//
//   - v1beta1, v1beta2: assuredConcurrencyShares is v1's nominalConcurrencyShares, and its
//     zero (absent) means the default, 30;
//   - v1beta3: nominalConcurrencyShares, whose zero means 30 unless the annotation
//     flowcontrol.k8s.io/v1beta3-preserve-zero-concurrency-shares is present (the annotation is
//     dropped on conversion);
//   - v1: nominalConcurrencyShares, absent means 30, 0 is kept.
//
// lendablePercent and borrowingLimitPercent exist in all four (absent lendablePercent: 0).
var versions = map[string]converter{
	flowcontrolv1.SchemeGroupVersion.Version:      {plc: decodeV1PLC, fs: decodeAs[flowcontrolv1.FlowSchema]},
	flowcontrolv1beta3.SchemeGroupVersion.Version: {plc: decodeV1beta3PLC, fs: decodeAs[flowcontrolv1beta3.FlowSchema]},
	flowcontrolv1beta2.SchemeGroupVersion.Version: {plc: decodeV1beta2PLC, fs: decodeAs[flowcontrolv1beta2.FlowSchema]},
	flowcontrolv1beta1.SchemeGroupVersion.Version: {plc: decodeV1beta1PLC, fs: decodeAs[flowcontrolv1beta1.FlowSchema]},
}

// supportedVersions lists the versions read, newest first, for messages.
const supportedVersions = "v1, v1beta3, v1beta2 and v1beta1"

// strictDecoder decodes data into obj, rejecting unknown and duplicate fields.
type strictDecoder func(data []byte, obj any) bool

// converter decodes one version's objects into v1.
type converter struct {
	plc func(data []byte, strict strictDecoder) (*flowcontrolv1.PriorityLevelConfiguration, bool)
	fs  func(data []byte, strict strictDecoder) (*flowcontrolv1.FlowSchema, bool)
}

// decodeAs decodes a FlowSchema strictly at version T and converts it to v1 field by field
// (the versions' FlowSchemas have the same fields).
func decodeAs[T any](data []byte, strict strictDecoder) (*flowcontrolv1.FlowSchema, bool) {
	var versioned T
	if !strict(data, &versioned) {
		return nil, false
	}
	var out flowcontrolv1.FlowSchema
	if !sameFields(&versioned, &out) {
		return nil, false
	}
	return &out, true
}

func decodeV1PLC(data []byte, strict strictDecoder) (*flowcontrolv1.PriorityLevelConfiguration, bool) {
	var plc flowcontrolv1.PriorityLevelConfiguration
	return &plc, strict(data, &plc)
}

func decodeV1beta3PLC(data []byte, strict strictDecoder) (*flowcontrolv1.PriorityLevelConfiguration, bool) {
	var in flowcontrolv1beta3.PriorityLevelConfiguration
	if !strict(data, &in) {
		return nil, false
	}
	var shares *int32
	if l := in.Spec.Limited; l != nil {
		_, keepZero := in.Annotations[flowcontrolv1beta3.PriorityLevelPreserveZeroConcurrencySharesKey]
		if l.NominalConcurrencyShares != 0 || keepZero {
			shares = &l.NominalConcurrencyShares
		}
	}
	plc, ok := limitedTo(&in, shares)
	if ok && plc.Annotations != nil {
		delete(plc.Annotations, flowcontrolv1beta3.PriorityLevelPreserveZeroConcurrencySharesKey)
	}
	return plc, ok
}

func decodeV1beta2PLC(data []byte, strict strictDecoder) (*flowcontrolv1.PriorityLevelConfiguration, bool) {
	var in flowcontrolv1beta2.PriorityLevelConfiguration
	if !strict(data, &in) {
		return nil, false
	}
	var shares *int32
	if l := in.Spec.Limited; l != nil && l.AssuredConcurrencyShares != 0 {
		shares = &l.AssuredConcurrencyShares
	}
	return limitedTo(&in, shares)
}

func decodeV1beta1PLC(data []byte, strict strictDecoder) (*flowcontrolv1.PriorityLevelConfiguration, bool) {
	var in flowcontrolv1beta1.PriorityLevelConfiguration
	if !strict(data, &in) {
		return nil, false
	}
	var shares *int32
	if l := in.Spec.Limited; l != nil && l.AssuredConcurrencyShares != 0 {
		shares = &l.AssuredConcurrencyShares
	}
	return limitedTo(&in, shares)
}

// limitedTo converts a beta PriorityLevelConfiguration to v1 with the given nominal shares
// (nil: v1's default); every other field has the same name and meaning.
func limitedTo(in any, shares *int32) (*flowcontrolv1.PriorityLevelConfiguration, bool) {
	var out flowcontrolv1.PriorityLevelConfiguration
	if !sameFields(in, &out) {
		return nil, false
	}
	if out.Spec.Limited != nil {
		out.Spec.Limited.NominalConcurrencyShares = nil
		if shares != nil {
			v := *shares
			out.Spec.Limited.NominalConcurrencyShares = &v
		}
	}
	return &out, true
}

// sameFields copies in into out through JSON: the fields of the same name, which in every
// flowcontrol version have the same meaning (the shares aside, handled by the callers). It
// fails only on a bug: both sides are k8s.io/api types.
func sameFields(in, out any) bool {
	data, err := json.Marshal(in)
	if err == nil {
		err = json.Unmarshal(data, out)
	}
	if err != nil {
		panic(fmt.Sprintf("converting %T to %T: %v", in, out, err))
	}
	return true
}
