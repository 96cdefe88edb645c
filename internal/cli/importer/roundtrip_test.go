package importer

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/utils/ptr"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/classify"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apf/request"
	"github.com/apf-operator/apf-operator/internal/cli/validate"
	"github.com/apf-operator/apf-operator/internal/manifest"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/internal/native/budget"
	"github.com/apf-operator/apf-operator/internal/native/nativetest"
	"github.com/apf-operator/apf-operator/internal/nativeview"
)

// corpusSize is the number of requests each round trip classifies.
const corpusSize = 6000

// bootstrapInput is kube-apiserver's own configuration: mandatory and suggested objects.
func bootstrapInput() *Input {
	objs := nativeview.BootstrapObjects()
	return &Input{PriorityLevels: objs.PriorityLevels, FlowSchemas: objs.FlowSchemas}
}

// TestRoundTripBootstrap imports kube-apiserver's suggested configuration and checks that the
// classifier picks, for every request of the corpus, the imported twin of kube-apiserver's
// choice, and that the schemas that project again match what the originals matched.
func TestRoundTripBootstrap(t *testing.T) {
	rt := roundTrip(t, bootstrapInput(), Options{IncludeBootstrap: true})
	wantLevels := map[string]int32{"exempt": 0, "leader-election": 1000, "node-high": 2000, "system": 3000,
		"workload-high": 4000, "workload-low": 5000, "global-default": 6000}
	for _, rp := range rt.res.RequestPriorities {
		if want, ok := wantLevels[rp.Name]; !ok || rp.Spec.PriorityLevel != want {
			t.Errorf("RequestPriority %s at level %d; want the levels %v", rp.Name, rp.Spec.PriorityLevel, wantLevels)
		}
	}
	if len(rt.res.RequestPriorities) != len(wantLevels) {
		t.Errorf("%d RequestPriority objects, want %d", len(rt.res.RequestPriorities), len(wantLevels))
	}
	// A service account wildcard becomes a pattern over user names, which internal/native
	// projects back onto the native wildcard.
	rt.wantReprojected(t, "probes", "system-node-high", "system-nodes", "kube-controller-manager",
		"kube-controller-manager-nonresource", "kube-scheduler", "kube-scheduler-nonresource", "service-accounts",
		"global-default", "system-leader-election", "kube-system-service-accounts", "kube-system-service-accounts-nonresource")
}

// TestRoundTripCustom does the same on testdata/custom.yaml: users, groups and service
// accounts, resources with subresources, namespaces with and without cluster scope,
// non-resource paths of every form, a single-queue level, an unused level and a dangling
// schema.
func TestRoundTripCustom(t *testing.T) {
	in, err := readFiles([]string{filepath.Join("testdata", "custom.yaml")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	mandatory := bootstrapInput() // kube-apiserver always has its mandatory objects
	var suggested []flowcontrolv1.PriorityLevelConfiguration
	for _, plc := range mandatory.PriorityLevels {
		if plc.Name == "exempt" || plc.Name == "catch-all" {
			in.PriorityLevels = append(in.PriorityLevels, plc)
		} else {
			suggested = append(suggested, plc)
		}
	}
	for _, fs := range mandatory.FlowSchemas {
		if fs.Name == "exempt" || fs.Name == "catch-all" {
			in.FlowSchemas = append(in.FlowSchemas, fs)
		}
	}
	// The cluster also has kube-apiserver's suggested levels, as a stock one does: they lend
	// the seats the imported levels borrow (tenants: 50 shares × borrowingLimitPercent 100).
	rt := roundTrip(t, in, Options{}, suggested...)
	// ci tests a service account wildcard (see TestRoundTripBootstrap); orphan is not in effect.
	rt.wantReprojected(t, "ci", "everyone", "ops", "ops-nonresource", "probes-extra", "tenant-users")
	// Beside the mandatory levels alone, which lend nothing but custom.yaml's tenants' 20 %, the
	// borrowing rule refuses tenants' explicit 100 %: an import keeps no unsafe borrowing.
	alone := native.Project(rt.cfg, native.Existing{PriorityLevels: in.PriorityLevels,
		MaxSeatLossPercent: ptr.To[int32](budget.MaxMaxLossPercent)})
	r := alone.RequestPriorities["tenants"]
	if r.Reason != flowv1.ReasonOverBudget || len(r.Errors) != 1 || r.Errors[0].Field != "spec.borrowingLimitPercent" {
		t.Errorf("tenants beside the mandatory levels alone: %s %v, want %s on spec.borrowingLimitPercent",
			r.Reason, r.Errors, flowv1.ReasonOverBudget)
	}
}

// roundTripState is what one round trip computed.
type roundTripState struct {
	in      *Input
	res     *Result
	rps     []flowv1.RequestPriority // the printed RequestPriority objects, read back
	cfg     *effective.Config
	plan    *native.Plan
	corpus  []request.Attributes
	origins map[string]*flowcontrolv1.FlowSchema // imported name -> native schema
	// kube is kube-apiserver's own controller on in, the oracle of its picks.
	kube *nativetest.KubeAPIServer
}

// roundTrip imports in, checks the printed manifests with `validate`, and compares the
// classification of the corpus natively and by the classifier. others are the cluster's
// native levels beside the inputs: they count in the budget of the projection only.
func roundTrip(t *testing.T, in *Input, opts Options, others ...flowcontrolv1.PriorityLevelConfiguration) *roundTripState {
	t.Helper()
	rt := &roundTripState{in: in, res: Import(in, opts), corpus: requestCorpus(corpusSize)}
	if len(rt.res.Problems) > 0 {
		t.Fatalf("problems: %q", rt.res.Problems)
	}
	var fss []flowv1.FlowSchema
	rt.rps, fss = reload(t, rt.res)
	rt.cfg = effective.Compute(rt.rps, fss)
	// An imported configuration repeats the native levels' shares (245 for the bootstrap
	// ones), past the default share budget: the round trip is about fidelity, so allow 90%.
	// The inputs' levels exist natively: bound RequestPriorities project onto them.
	rt.plan = native.Project(rt.cfg, native.Existing{PriorityLevels: append(slices.Clip(in.PriorityLevels), others...),
		MaxSeatLossPercent: ptr.To[int32](budget.MaxMaxLossPercent)})
	rt.origins = map[string]*flowcontrolv1.FlowSchema{}
	for i := range in.FlowSchemas {
		fs := &in.FlowSchemas[i]
		rt.origins[fs.Name], rt.origins[fs.Name+nonResourceSuffix] = fs, fs
	}
	rt.kube = nativetest.Start(t, in.PriorityLevels, in.FlowSchemas)
	defer rt.kube.Close()
	rt.checkFirstMatch(t)
	rt.checkEachSchema(t)
	rt.checkReprojection(t)
	return rt
}

// reload prints the result, checks it with `apf-operator validate --target filter` (the
// admission rules: an imported kube-apiserver configuration holds more shares than the native
// share budget leaves beside kube-apiserver's own levels) and reads it back.
func reload(t *testing.T, res *Result) ([]flowv1.RequestPriority, []flowv1.FlowSchema) {
	t.Helper()
	return reloadFor(t, res, "filter")
}

// reloadFor prints the result, checks it with `apf-operator validate --target target` and
// reads it back.
func reloadFor(t *testing.T, res *Result, target string) ([]flowv1.RequestPriority, []flowv1.FlowSchema) {
	t.Helper()
	var out bytes.Buffer
	if err := Write(&out, res); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "imported.yaml")
	if err := os.WriteFile(file, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var findings, summary bytes.Buffer
	if code := validate.Run([]string{"--target", target, "-f", file}, nil, &findings, &summary); code != validate.ExitOK {
		t.Fatalf("validate --target %s: exit %d\n%s%s\n%s", target, code, findings.String(), summary.String(), out.String())
	}
	rps, fss, err := manifest.LoadObjects([]string{file}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return rps, fss
}

// checkFirstMatch compares, request by request, the classifier's FlowSchema and level with
// the imported twin of kube-apiserver's choice.
func (rt *roundTripState) checkFirstMatch(t *testing.T) {
	t.Helper()
	cls := classify.Compile(rt.cfg)
	var got classify.Result
	for i := range rt.corpus {
		a := &rt.corpus[i]
		want := rt.expected(a)
		cls.Classify(a, &got)
		if got.Schema.Name != want {
			t.Fatalf("request %+v: classified into %q, want %q", *a, got.Schema.Name, want)
		}
		if fs := rt.origins[want]; fs != nil && !sameLevel(got.Schema.Priority.Name, fs) {
			t.Fatalf("request %+v: level %q, native level %q", *a, got.Schema.Priority.Name, fs.Spec.PriorityLevelConfiguration.Name)
		}
	}
}

func sameLevel(ours string, fs *flowcontrolv1.FlowSchema) bool {
	return ours == fs.Spec.PriorityLevelConfiguration.Name
}

// expected is the name of the schema the classifier should pick for a: the imported twin of
// kube-apiserver's pick, the backstop for catch-all, and the exempt backstop for members of
// system:masters, which kube-apiserver's mandatory exempt schema takes first and our
// classifier sends to the exempt level ahead of every FlowSchema.
func (rt *roundTripState) expected(a *request.Attributes) string {
	pick := rt.kube.Pick(a)
	switch {
	case pick == flowcontrolv1.FlowSchemaNameExempt:
		return effective.BackstopExemptName
	case pick == flowcontrolv1.FlowSchemaNameCatchAll:
		return effective.CatchAllName
	case !a.ResourceRequest && rt.split(pick):
		return pick + nonResourceSuffix
	}
	return pick
}

// split reports whether the native schema was imported as two.
func (rt *roundTripState) split(name string) bool {
	return slices.ContainsFunc(rt.res.FlowSchemas, func(fs flowv1.FlowSchema) bool { return fs.Name == name+nonResourceSuffix })
}

// checkEachSchema checks every imported schema alone: it matches exactly the requests its
// native original matches (the two halves of a split schema together).
func (rt *roundTripState) checkEachSchema(t *testing.T) {
	t.Helper()
	for _, fs := range rt.res.FlowSchemas {
		if strings.HasSuffix(fs.Name, nonResourceSuffix) {
			continue
		}
		alone := []flowv1.FlowSchema{fs}
		if rt.split(fs.Name) {
			alone = append(alone, *rt.imported(fs.Name + nonResourceSuffix))
		}
		cfg := effective.Compute(rt.rps, alone)
		if len(cfg.Schemas) == 0 {
			continue // refers to a level that is not there: matches nothing, as natively
		}
		cls := classify.Compile(cfg)
		var got classify.Result
		for i := range rt.corpus {
			a := &rt.corpus[i]
			if slices.Contains(a.Groups, effective.MastersGroup) {
				continue // the classifier sends them to the exempt level ahead of every schema
			}
			cls.Classify(a, &got)
			if ours, theirs := !got.Schema.Backstop, nativeMatches(rt.origins[fs.Name], a); ours != theirs {
				t.Fatalf("FlowSchema %s alone: matches %+v: %v, natively %v", fs.Name, *a, ours, theirs)
			}
		}
	}
}

func (rt *roundTripState) imported(name string) *flowv1.FlowSchema {
	for i := range rt.res.FlowSchemas {
		if rt.res.FlowSchemas[i].Name == name {
			return &rt.res.FlowSchemas[i]
		}
	}
	return nil
}

// checkReprojection checks that every imported schema that native.Project projects again
// matches, natively, what its original matched (on the requests its conjunctions can accept:
// a split half on its own kind of request), and that every level projected again has the
// original's spec.
func (rt *roundTripState) checkReprojection(t *testing.T) {
	t.Helper()
	for name, r := range rt.plan.FlowSchemaResults {
		if !r.Projected {
			continue
		}
		again := rt.plan.FlowSchemas[slices.IndexFunc(rt.plan.FlowSchemas, func(fs flowcontrolv1.FlowSchema) bool {
			return fs.Name == r.NativeName
		})]
		for i := range rt.corpus {
			a := &rt.corpus[i]
			if rt.split(strings.TrimSuffix(name, nonResourceSuffix)) && a.ResourceRequest == strings.HasSuffix(name, nonResourceSuffix) {
				continue // the other half's requests
			}
			if got, want := nativeMatches(&again, a), nativeMatches(rt.origins[name], a); got != want {
				t.Fatalf("FlowSchema %s projected again as %s: matches %+v: %v, the original %v", name, again.Name, *a, got, want)
			}
		}
	}
	rt.checkLevels(t)
}

// checkLevels compares each level projected again with its original, v1 defaults applied.
func (rt *roundTripState) checkLevels(t *testing.T) {
	t.Helper()
	for _, again := range rt.plan.PriorityLevels {
		name := strings.TrimPrefix(again.Name, "apf-")
		i := slices.IndexFunc(rt.in.PriorityLevels, func(p flowcontrolv1.PriorityLevelConfiguration) bool { return p.Name == name })
		if i < 0 {
			continue // a backstop
		}
		got, want := limitedOf(again), limitedOf(rt.in.PriorityLevels[i])
		if want.borrowing == unlimited {
			// Absent natively (no limit): the projection carries the operator's default, or
			// the lower value the budget leaves, which the status reports (#33).
			rt.checkDefaultedBorrowing(t, name, got.borrowing)
			want.borrowing = got.borrowing
		}
		if got != want {
			t.Errorf("PriorityLevelConfiguration %s projected again as %+v, the original is %+v", name, got, want)
		}
	}
}

// checkDefaultedBorrowing checks the borrowing limit given to a level whose original leaves
// borrowingLimitPercent absent: budget.DefaultBorrowingLimitPercent, or less as its
// RequestPriority's status says.
func (rt *roundTripState) checkDefaultedBorrowing(t *testing.T, name string, got int32) {
	t.Helper()
	msg := rt.plan.RequestPriorities[name].Message
	want := fmt.Sprintf("gets the operator's default %d", budget.DefaultBorrowingLimitPercent)
	if got < budget.DefaultBorrowingLimitPercent {
		want = fmt.Sprintf("gets %d: the operator's default %d, lowered", got, budget.DefaultBorrowingLimitPercent)
	}
	if got < 0 || got > budget.DefaultBorrowingLimitPercent || !strings.Contains(msg, want) {
		t.Errorf("PriorityLevelConfiguration %s: borrowingLimitPercent absent, projected again with %d and status %q; "+
			"want %d or less, and the status saying %q", name, got, msg, budget.DefaultBorrowingLimitPercent, want)
	}
}

// unlimited stands for an absent borrowingLimitPercent: kube-apiserver's "no limit".
const unlimited = -1

// limited is the meaning of a Limited level, v1 defaults applied.
type limited struct {
	shares, lendable, borrowing, queues, hand, queueLength int32
}

func limitedOf(plc flowcontrolv1.PriorityLevelConfiguration) limited {
	l := plc.Spec.Limited
	q := queuing(*l.LimitResponse.Queuing)
	return limited{shares: *int32Or(l.NominalConcurrencyShares, defaultShares), lendable: *int32Or(l.LendablePercent, 0),
		borrowing: *int32Or(l.BorrowingLimitPercent, unlimited), queues: q.Queues, hand: q.HandSize, queueLength: q.QueueLengthLimit}
}

// wantReprojected checks which imported FlowSchemas native.Project projects again.
func (rt *roundTripState) wantReprojected(t *testing.T, names ...string) {
	t.Helper()
	var got []string
	for name, r := range rt.plan.FlowSchemaResults {
		if r.Projected {
			got = append(got, name)
		}
	}
	slices.Sort(got)
	slices.Sort(names)
	if !slices.Equal(got, names) {
		t.Errorf("projected again: %v, want %v", got, names)
	}
}
