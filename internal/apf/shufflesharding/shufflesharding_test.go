package shufflesharding

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"testing"
)

func TestFallingFactorialProposalExample(t *testing.T) {
	// The proposal: numQueues=128 and handSize=6 -> 3905000064000 * A[6].
	ff, ok := FallingFactorial(128, 6)
	if !ok || ff != 3_905_000_064_000 {
		t.Fatalf("ff(128, 6) = %d, %v; want 3905000064000, true", ff, ok)
	}
}

func TestFallingFactorialLimit(t *testing.T) {
	cases := []struct {
		n, k int
		ok   bool
	}{
		{1, 1, true}, {1, 0, true}, {64, 10, true}, {64, 11, false}, {4096, 5, true},
		{4096, 6, false}, {1 << 30, 2, true}, {1 << 30, 3, false}, {64, 64, false},
	}
	for _, c := range cases {
		_, ok := FallingFactorial(c.n, c.k)
		if ok != c.ok {
			t.Errorf("FallingFactorial(%d, %d) ok = %v, want %v", c.n, c.k, ok, c.ok)
		}
	}
}

func TestValidateHandSizeMessage(t *testing.T) {
	err := ValidateHandSize(64, 12)
	if err == nil || !strings.Contains(err.Error(), "ff(queuesPerWidth=64, handSize=12)") ||
		!strings.Contains(err.Error(), "2^60") {
		t.Fatalf("ValidateHandSize(64, 12) = %v; want the computed figure and the 2^60 bound", err)
	}
	for _, bad := range [][2]int{{0, 1}, {4, 0}, {4, 5}} {
		if ValidateHandSize(bad[0], bad[1]) == nil {
			t.Errorf("ValidateHandSize(%d, %d) = nil; want an error", bad[0], bad[1])
		}
	}
}

// TestDealMatchesDefinition checks Deal against a direct transcription of the proposal: decode
// V into coefficients, then take the A[i]-th entry of the remaining list.
func TestDealMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, p := range [][2]int{{128, 6}, {8, 8}, {1, 1}, {3, 2}, {1000, 4}} {
		d, err := NewDealer(p[0], p[1])
		if err != nil {
			t.Fatal(err)
		}
		for trial := 0; trial < 2000; trial++ {
			v := rng.Uint64()
			got := d.DealIntoHand(v, nil)
			want := referenceDeal(v, p[0], p[1])
			if !equal(got, want) {
				t.Fatalf("Deal(%d) with %v = %v, want %v", v, p, got, want)
			}
		}
	}
}

func referenceDeal(v uint64, n, h int) []int {
	remaining := make([]int, n)
	for i := range remaining {
		remaining[i] = i
	}
	var hand []int
	for i := 0; i < h; i++ {
		a := int(v % uint64(n-i))
		v /= uint64(n - i)
		hand = append(hand, remaining[a])
		remaining = append(remaining[:a], remaining[a+1:]...)
	}
	return hand
}

func TestDealDistinctAndInRange(t *testing.T) {
	d, _ := NewDealer(128, 6)
	for i := 0; i < 1000; i++ {
		hand := d.DealIntoHand(Hash("schema", string(rune('a'+i%26))+strings.Repeat("x", i)), nil)
		s := append([]int(nil), hand...)
		sort.Ints(s)
		for j := range s {
			if s[j] < 0 || s[j] >= 128 || (j > 0 && s[j] == s[j-1]) {
				t.Fatalf("hand %v is not 6 distinct queues in [0,128)", hand)
			}
		}
	}
}

func TestHashSeparatesFields(t *testing.T) {
	if Hash("ab", "c") == Hash("a", "bc") {
		t.Fatal(`Hash("ab","c") == Hash("a","bc")`)
	}
	first, second := Hash("s", "u"), Hash("s", "u")
	if first != second {
		t.Fatal("Hash is not deterministic")
	}
}

// TestHashSpread checks the quality the falling-factorial decoding relies on, on names that
// differ little: distinct 64-bit values, flipping any input bit flips each output bit about
// half the time, and the hands of many flows cover the queues evenly.
func TestHashSpread(t *testing.T) {
	seen := map[uint64]string{}
	for k := range 100_000 {
		for _, s := range []string{"tenant-" + strconv.Itoa(k%100), "workload-low"} {
			d := "system:serviceaccount:ns-" + strconv.Itoa(k)
			key := s + "/" + d
			h := Hash(s, d)
			if other, dup := seen[h]; dup && other != key {
				t.Fatalf("Hash(%s) == Hash(%s) == %#x", key, other, h)
			}
			seen[h] = key
		}
	}
	checkAvalanche(t)
	checkHandCoverage(t)
}

// checkAvalanche flips every bit of distinguishers of 1 to 40 bytes (every load path of the
// hash) and counts, per output bit, how often it flips: about half the time, every bit.
func checkAvalanche(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var flips [64]int
	total := 0
	for n := 1; n <= 40; n++ {
		for range 40 {
			b := make([]byte, n)
			for i := range b {
				b[i] = byte(rng.UintN(256))
			}
			schema := []string{"s", "workload-high", "a-flow-schema-with-a-long-name"}[rng.IntN(3)]
			h0 := Hash(schema, string(b))
			for i := range 8 * n {
				b[i/8] ^= 1 << (i % 8)
				d := Hash(schema, string(b)) ^ h0
				b[i/8] ^= 1 << (i % 8)
				for j := range flips {
					flips[j] += int(d >> j & 1)
				}
				total++
			}
		}
	}
	for j, f := range flips {
		if p := float64(f) / float64(total); p < 0.48 || p > 0.52 {
			t.Errorf("output bit %d flips with probability %.3f when an input bit flips, want about 0.5", j, p)
		}
	}
}

// checkHandCoverage deals hands of 6 from 128 queues for consecutive user names: every queue
// must be used within 15% of the mean.
func checkHandCoverage(t *testing.T) {
	d, _ := NewDealer(128, 6)
	var use [128]int
	const flows = 64_000
	hand := make([]int, 0, 6)
	for k := range flows {
		for _, q := range d.DealIntoHand(Hash("workload-high", "user-"+strconv.Itoa(k)), hand[:0]) {
			use[q]++
		}
	}
	mean := float64(flows*6) / 128
	for q, n := range use {
		if float64(n) < 0.85*mean || float64(n) > 1.15*mean {
			t.Errorf("queue %d is in %d hands, want about %.0f", q, n, mean)
		}
	}
}

// TestHashValues pins the flow hash: every API server must deal the same hands, so a change of
// these values is a change of the wire-visible behaviour, not a refactoring.
func TestHashValues(t *testing.T) {
	cases := []struct {
		schema, distinguisher string
		want                  uint64
	}{
		{"workload-high", "tenant-42", hashWorkloadHighTenant42},
		{"s", "", hashSEmpty},
		{"", "", hashEmptyEmpty},
		{"workload-low", "ab", hashWorkloadLowAB},
		{"workload-low", "team-a", hashWorkloadLowTeamA},
		{"system-high", "system:node:node-1234", hashSystemHighNode},
		{"system-high", "system:serviceaccount:kube-system:replicaset-controller", hashSystemHighLongSA},
	}
	for _, c := range cases {
		if got := Hash(c.schema, c.distinguisher); got != c.want {
			t.Errorf("Hash(%q, %q) = %#x, want %#x", c.schema, c.distinguisher, got, c.want)
		}
		if got := NewFlowHasher(c.schema).Hash(c.distinguisher); got != c.want {
			t.Errorf("NewFlowHasher(%q).Hash(%q) = %#x, want %#x", c.schema, c.distinguisher, got, c.want)
		}
		if got := NewFlowHasher(c.schema).Combine(StringHash(c.distinguisher)); got != c.want {
			t.Errorf("NewFlowHasher(%q).Combine(StringHash(%q)) = %#x, want %#x", c.schema, c.distinguisher, got, c.want)
		}
	}
}

func TestDealAllocatesNothing(t *testing.T) {
	d, _ := NewDealer(128, 6)
	hand := make([]int, 0, 6)
	allocs := testing.AllocsPerRun(100, func() { hand = d.DealIntoHand(Hash("s", "u"), hand[:0]) })
	if allocs != 0 {
		t.Fatalf("DealIntoHand allocates %v times per run, want 0", allocs)
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func FuzzDeal(f *testing.F) {
	f.Add(uint64(0), 128, 6)
	f.Add(^uint64(0), 4096, 5)
	f.Add(uint64(12345), 1, 1)
	f.Fuzz(func(t *testing.T, v uint64, n, h int) {
		d, err := NewDealer(n, h)
		if err != nil {
			return
		}
		got := d.DealIntoHand(v, nil)
		if want := referenceDeal(v, n, h); !equal(got, want) {
			t.Fatalf("Deal(%d, %d, %d) = %v, want %v", v, n, h, got, want)
		}
	})
}

func BenchmarkHash(b *testing.B) {
	for _, d := range []string{"team-a", "tenant-42", "system:node:node-1234",
		"system:serviceaccount:kube-system:replicaset-controller"} {
		b.Run(fmt.Sprintf("len=%d", len(d)), func(b *testing.B) {
			f := NewFlowHasher("workload-high")
			var sum uint64
			for b.Loop() {
				sum += f.Hash(d)
			}
			if sum == 1 {
				b.Log(sum) // keep the sum alive
			}
		})
	}
}

func BenchmarkHashAndDeal(b *testing.B) {
	d, _ := NewDealer(128, 6)
	hand := make([]int, 0, 6)
	b.ReportAllocs()
	for b.Loop() {
		hand = d.DealIntoHand(Hash("workload-high", "tenant-42"), hand[:0])
	}
}

// Flow hashes of the word-at-a-time hash with the distinguisher's StringHash folded into the
// schema's seed (the first release used FNV-1a); see TestHashValues.
// The cases cover every load path: empty, 2 bytes, 6, 9, 21 and 56.
const (
	hashWorkloadHighTenant42 = 0x736dca675b14a1f5
	hashSEmpty               = 0x1711a09a87f49d0d
	hashEmptyEmpty           = 0xd3d5ca22b95acd1e
	hashWorkloadLowAB        = 0x0142dc68f916d440
	hashWorkloadLowTeamA     = 0x8afa3d58e9a681ea
	hashSystemHighNode       = 0x61273f674a9433ea
	hashSystemHighLongSA     = 0xa11f7f59790fada7
)
