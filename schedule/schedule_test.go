package schedule_test

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	xformv1 "github.com/newtricks/newtricks/proto/gen/xformv1"
	"github.com/newtricks/newtricks/schedule"
	"github.com/newtricks/newtricks/xformgraph"
)

func graph() *xformv1.Graph {
	return &xformv1.Graph{Version: 1, Seed: 7, Nodes: []*xformv1.Node{
		xformgraph.NewNodeSpec("dec", "decode_image", "input", nil),
		xformgraph.NewNodeSpec("t", "to_tensor", "dec", map[string]any{"layout": "CHW", "dtype": "uint8"}),
	}, Outputs: []string{"t"}}
}

func spec(t *testing.T, batch, world int, weights ...float64) *schedule.Spec {
	t.Helper()
	s := &schedule.Spec{Seed: 99, GlobalBatch: batch, WorldSize: world}
	for i, w := range weights {
		s.Sources = append(s.Sources, schedule.Source{Name: fmt.Sprintf("src%d", i), Dataset: fmt.Sprintf("/data/%d", i), Weight: w, Graph: graph()})
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	return s
}

func plan(t *testing.T, s *schedule.Spec, sizes ...int) *schedule.Plan {
	t.Helper()
	p, err := schedule.NewPlan(s, sizes, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDeterministicAndResumable(t *testing.T) {
	s := spec(t, 32, 4, 1, 2, 0.5)
	a := plan(t, s, 100, 37, 1000)
	var want [][]schedule.Slot
	for step := uint64(0); step < 3000; step++ {
		st, err := a.Step(step)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, st)
	}
	// A fresh plan (a resumed job, or a DataNode joining late) asked for steps out of order
	// computes the same slots.
	b := plan(t, s, 100, 37, 1000)
	for _, step := range []uint64{2999, 0, 1500, 1024, 1023, 2048, 7} {
		got, err := b.Step(step)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want[step]) {
			t.Fatalf("step %d differs after resume", step)
		}
	}
	// Through the wire form too.
	s2, err := schedule.FromProto(s.ToProto())
	if err != nil {
		t.Fatal(err)
	}
	got, _ := plan(t, s2, 100, 37, 1000).Step(1234)
	if !slices.Equal(got, want[1234]) {
		t.Fatal("spec round trip changes the schedule")
	}
}

func TestEpochsCoverEverySampleOnce(t *testing.T) {
	for _, sampler := range []schedule.Sampler{schedule.Shuffle, schedule.Sequential} {
		s := spec(t, 8, 2, 1)
		s.Sampler = sampler
		const n = 53
		p := plan(t, s, n)
		seen := map[uint64]map[int]int{}
		for step := uint64(0); step < 3*n; step++ { // 8*159 = 1272 draws: 24 full epochs
			st, _ := p.Step(step)
			for _, sl := range st {
				if seen[sl.Epoch] == nil {
					seen[sl.Epoch] = map[int]int{}
				}
				seen[sl.Epoch][sl.Index]++
			}
		}
		for e := uint64(0); e < 24; e++ {
			if len(seen[e]) != n {
				t.Fatalf("%v: epoch %d covers %d of %d samples", sampler, e, len(seen[e]), n)
			}
			for i, c := range seen[e] {
				if c != 1 {
					t.Fatalf("%v: epoch %d: sample %d drawn %d times", sampler, e, i, c)
				}
			}
		}
		if sampler == schedule.Shuffle {
			st, _ := p.Step(0)
			seq := true
			for k, sl := range st {
				if sl.Index != k {
					seq = false
				}
			}
			if seq {
				t.Error("shuffle sampler returned index order")
			}
		}
	}
}

func TestWeightsAndCurriculum(t *testing.T) {
	s := spec(t, 16, 2, 1, 1, 1, 1, 1, 1, 1, 1)
	s.Phases = []schedule.Phase{{From: 0, Weights: []float64{6, 2, 0, 0, 0, 0, 0, 0}}, {From: 2000, Weights: []float64{1, 1, 1, 1, 1, 1, 1, 1}}}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	p := plan(t, s, 50, 50, 50, 50, 50, 50, 50, 50)
	count := func(from, to uint64) []float64 {
		c := make([]float64, 8)
		for step := from; step < to; step++ {
			st, _ := p.Step(step)
			if len(st) != 16 {
				t.Fatalf("step %d has %d slots", step, len(st))
			}
			for _, sl := range st {
				c[sl.Source]++
			}
			// Every step's counts equal floor or ceil of its share.
			for i, n := range p.Counts(step) {
				w := []float64{0.75, 0.25, 0, 0, 0, 0, 0, 0}
				if step >= 2000 {
					w = []float64{.125, .125, .125, .125, .125, .125, .125, .125}
				}
				if exp := w[i] * 16; float64(n) < math.Floor(exp) || float64(n) > math.Ceil(exp) {
					t.Fatalf("step %d source %d: %d samples, share %v", step, i, n, exp)
				}
			}
		}
		for i := range c {
			c[i] /= float64((to - from) * 16)
		}
		return c
	}
	first := count(0, 2000)
	if math.Abs(first[0]-0.75) > 0.001 || math.Abs(first[1]-0.25) > 0.001 || first[2] != 0 {
		t.Errorf("phase 0 mix %v, want 0.75/0.25/0...", first)
	}
	second := count(2000, 4000)
	for i, x := range second {
		if math.Abs(x-0.125) > 0.001 {
			t.Errorf("phase 1 source %d share %v, want 0.125", i, x)
		}
	}
}

func TestFractionalWeightsHoldOverManySteps(t *testing.T) {
	s := spec(t, 10, 1, 0.1, 0.33, 0.57)
	p := plan(t, s, 7, 7, 7)
	c := make([]float64, 3)
	const steps = 5000
	for step := uint64(0); step < steps; step++ {
		for i, n := range p.Counts(step) {
			c[i] += float64(n)
		}
	}
	for i, w := range []float64{0.1, 0.33, 0.57} {
		if got := c[i] / (steps * 10); math.Abs(got-w) > 0.005 {
			t.Errorf("source %d: share %.4f, want %.2f", i, got, w)
		}
	}
}

func TestPermuteIsBijection(t *testing.T) {
	for _, n := range []uint64{1, 2, 3, 5, 64, 1000, 4097} {
		seen := make([]bool, n)
		for j := uint64(0); j < n; j++ {
			x := schedule.Permute(1, 2, 3, j, n)
			if x >= n || seen[x] {
				t.Fatalf("n=%d: %d -> %d repeats or out of range", n, j, x)
			}
			seen[x] = true
		}
	}
}

func TestExplicitSteps(t *testing.T) {
	s := spec(t, 2, 1, 1)
	s.Explicit = [][]schedule.ExplicitSample{{{Source: 0, Key: "b", Epoch: 3}, {Source: 0, Key: "a"}}}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	lookup := func(_ int, k string) (int, bool) { i := strings.Index("ab", k); return i, i >= 0 && len(k) == 1 }
	p, err := schedule.NewPlan(s, []int{2}, lookup)
	if err != nil {
		t.Fatal(err)
	}
	st, err := p.Step(0)
	if err != nil || !slices.Equal(st, []schedule.Slot{{Source: 0, Index: 1, Epoch: 3}, {Source: 0, Index: 0}}) {
		t.Fatalf("step 0 = %v, %v", st, err)
	}
	if _, err := p.Step(1); !errors.Is(err, schedule.ErrEnd) {
		t.Fatalf("step 1: %v, want ErrEnd", err)
	}
	s.Explicit[0][0].Key = "zz"
	if _, err := schedule.NewPlan(s, []int{2}, lookup); !errors.Is(err, schedule.ErrUnknownSample) {
		t.Fatalf("unknown key: %v", err)
	}
}

func TestRejects(t *testing.T) {
	cases := map[string]string{
		"world does not divide": `{"version":1,"globalBatch":10,"worldSize":3,"sources":[{"name":"a","dataset":"/a","weight":1,"graph":%s}]}`,
		"no sources":            `{"version":1,"globalBatch":10,"worldSize":1}`,
		"zero weights":          `{"version":1,"globalBatch":10,"worldSize":1,"sources":[{"name":"a","dataset":"/a","weight":0,"graph":%s}]}`,
		"relative dataset":      `{"version":1,"globalBatch":10,"worldSize":1,"sources":[{"name":"a","dataset":"a","weight":1,"graph":%s}]}`,
		"bad graph":             `{"version":1,"globalBatch":10,"worldSize":1,"sources":[{"name":"a","dataset":"/a","weight":1,"graph":{"version":1,"nodes":[{"id":"x","op":"nope","input":"input"}],"outputs":["x"]}}]}`,
		"huge batch":            `{"version":1,"globalBatch":100000000,"worldSize":1,"sources":[{"name":"a","dataset":"/a","weight":1,"graph":%s}]}`,
		"phase not at 0":        `{"version":1,"globalBatch":10,"worldSize":1,"sources":[{"name":"a","dataset":"/a","weight":1,"graph":%s}],"phases":[{"fromStep":5,"weights":[1]}]}`,
		"unknown field":         `{"version":1,"bogus":1}`,
		"version":               `{"version":2,"globalBatch":10,"worldSize":1,"sources":[{"name":"a","dataset":"/a","weight":1,"graph":%s}]}`,
		"dup names":             `{"version":1,"globalBatch":10,"worldSize":1,"sources":[{"name":"a","dataset":"/a","weight":1,"graph":%s},{"name":"a","dataset":"/b","weight":1,"graph":%[1]s}]}`,
	}
	g, _ := xformgraph.MarshalJSON(graph())
	for name, js := range cases {
		if strings.Contains(js, "%") {
			js = fmt.Sprintf(js, g)
		}
		_, err := schedule.ParseJSON([]byte(js))
		if !errors.Is(err, schedule.ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
	ok := fmt.Sprintf(`{"version":1,"globalBatch":10,"worldSize":2,"sources":[{"name":"a","dataset":"/a","weight":1,"graph":%s}]}`, g)
	if _, err := schedule.ParseJSON([]byte(ok)); err != nil {
		t.Fatal(err)
	}
}

func TestOwnersSpreadHeavySamples(t *testing.T) {
	// Four heavy clips and twelve light images, every sample on all three members: the heavy
	// ones go to different members and the cost per member is balanced.
	var slots []schedule.Holding
	for i := 0; i < 16; i++ {
		c := int64(100)
		if i%4 == 0 {
			c = 10000
		}
		slots = append(slots, schedule.Holding{Cost: c, Bytes: []int64{5, 5, 5}})
	}
	own := schedule.Owners(1, 7, 3, slots)
	load := make([]int64, 3)
	for i, m := range own {
		load[m] += slots[i].Cost
	}
	if slices.Max(load)-slices.Min(load) > 10000 {
		t.Errorf("unbalanced loads %v", load)
	}
	if !slices.Equal(own, schedule.Owners(1, 7, 3, slots)) {
		t.Error("not deterministic")
	}
	// Only holders own; a spanning sample goes to the member holding most of it; no holder: -1.
	own = schedule.Owners(1, 7, 3, []schedule.Holding{{Cost: 1, Bytes: []int64{0, 3, 0}}, {Cost: 1, Bytes: []int64{2, 8, 6}}, {Cost: 1, Bytes: []int64{0, 0, 0}}})
	if !slices.Equal(own, []int{1, 1, -1}) {
		t.Errorf("owners %v, want [1 1 -1]", own)
	}
}

func BenchmarkStepFarAway(b *testing.B) {
	s := &schedule.Spec{Seed: 1, GlobalBatch: 256, WorldSize: 8}
	for i := 0; i < 8; i++ {
		s.Sources = append(s.Sources, schedule.Source{Name: fmt.Sprint("s", i), Dataset: "/d", Weight: 1, Graph: graph()})
	}
	for i := 0; i < b.N; i++ {
		p, _ := schedule.NewPlan(s, []int{1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000}, nil)
		p.Step(100000)
	}
}

// TestH64MatchesTheSpec checks H64 against docs/offload.md's definition computed with a
// streaming SHA-256, for short (one block) and long inputs, and a resumed cursor against one
// computed from the start.
func TestH64MatchesTheSpec(t *testing.T) {
	ref := func(tag string, xs ...uint64) uint64 {
		h := sha256.New()
		h.Write([]byte(tag))
		h.Write([]byte{0})
		for _, x := range xs {
			h.Write(binary.LittleEndian.AppendUint64(nil, x))
		}
		return binary.LittleEndian.Uint64(h.Sum(nil))
	}
	for n := 0; n < 20; n++ {
		xs := make([]uint64, n)
		for i := range xs {
			xs[i] = uint64(i)*0x9e3779b97f4a7c15 + uint64(n)
		}
		for _, tag := range []string{"", "own", "perm", strings.Repeat("x", 100)} {
			if got, want := schedule.H64(tag, xs...), ref(tag, xs...); got != want {
				t.Fatalf("H64(%q, %d values) = %x, want %x", tag, n, got, want)
			}
		}
	}
	s := spec(t, 8, 1, 3, 1)
	a, b := plan(t, s, 120, 40), plan(t, s, 120, 40)
	for _, st := range []uint64{700, 5, 701, 1500, 699, 2047, 2048, 702} {
		x, _ := a.Step(st)
		fresh := plan(t, s, 120, 40)
		y, _ := fresh.Step(st)
		if !slices.Equal(x, y) {
			t.Fatalf("step %d after other steps differs from a fresh plan's", st)
		}
		b.Step(st + 1)
	}
}
