package schedule

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"sync"
)

// Slot is one sample of a step: the source, the sample's position in that source's index,
// and the epoch its transform graph runs with.
type Slot struct {
	Source int
	Index  int
	Epoch  uint64
}

// Plan computes steps of one spec over sources of known sizes. It is safe for concurrent
// use; its only state is a cache of per-source cursors (a few integers per 1024 steps).
type Plan struct {
	spec     *Spec
	sizes    []int
	explicit [][]Slot // resolved explicit steps, nil in sampler mode
	srcW     []float64

	mu  sync.Mutex
	cps [][]uint64 // cps[k]: samples drawn from each source before step k*checkpointEvery
	// recent cursors, so that a reader going step by step (and a node preparing the next
	// steps) advances from a nearby step instead of summing from the checkpoint every time.
	recent    [recentCursors]cursorAt
	recentPos int
}

const (
	checkpointEvery = 1024
	recentCursors   = 8
)

type cursorAt struct {
	step uint64
	cur  []uint64 // nil: empty entry
}

// NewPlan binds spec to the sources' index sizes (sizes[i] samples in source i). lookup
// resolves the keys of explicit steps to index positions; it may be nil in sampler mode.
func NewPlan(spec *Spec, sizes []int, lookup func(source int, key string) (int, bool)) (*Plan, error) {
	if len(sizes) != len(spec.Sources) {
		return nil, fmt.Errorf("%w: %d source sizes for %d sources", ErrInvalid, len(sizes), len(spec.Sources))
	}
	p := &Plan{spec: spec, sizes: sizes}
	for _, src := range spec.Sources {
		p.srcW = append(p.srcW, src.Weight)
	}
	if len(spec.Explicit) > 0 {
		if lookup == nil {
			return nil, fmt.Errorf("%w: explicit steps need a key lookup", ErrInvalid)
		}
		p.explicit = make([][]Slot, len(spec.Explicit))
		for s, st := range spec.Explicit {
			p.explicit[s] = make([]Slot, len(st))
			for j, x := range st {
				idx, ok := lookup(x.Source, x.Key)
				if !ok {
					return nil, fmt.Errorf("%w: explicit step %d: %q is not in source %q", ErrUnknownSample, s, x.Key, spec.Sources[x.Source].Name)
				}
				p.explicit[s][j] = Slot{Source: x.Source, Index: idx, Epoch: x.Epoch}
			}
		}
		return p, nil
	}
	// A source that can be drawn from must have samples.
	check := func(w []float64, where string) error {
		for i, x := range w {
			if x > 0 && sizes[i] <= 0 {
				return fmt.Errorf("%w: source %q has weight %v %s but no samples", ErrInvalid, spec.Sources[i].Name, x, where)
			}
		}
		return nil
	}
	if len(spec.Phases) == 0 {
		if err := check(p.srcW, ""); err != nil {
			return nil, err
		}
	}
	for _, ph := range spec.Phases {
		if err := check(ph.Weights, fmt.Sprintf("from step %d", ph.From)); err != nil {
			return nil, err
		}
	}
	p.cps = [][]uint64{make([]uint64, len(sizes))}
	return p, nil
}

// Spec returns the plan's spec.
func (p *Plan) Spec() *Spec { return p.spec }

// Sizes returns the number of samples of every source.
func (p *Plan) Sizes() []int { return p.sizes }

// End reports whether step is past the schedule.
func (p *Plan) End(step uint64) bool {
	if p.explicit != nil {
		return step >= uint64(len(p.explicit))
	}
	return p.spec.MaxSteps > 0 && step >= p.spec.MaxSteps
}

// Step returns the global batch of a step: GlobalBatch slots; rank r reads
// [r*B/W, (r+1)*B/W) of them (see RankRange).
func (p *Plan) Step(step uint64) ([]Slot, error) {
	if p.End(step) {
		return nil, fmt.Errorf("%w: step %d", ErrEnd, step)
	}
	if p.explicit != nil {
		return append([]Slot(nil), p.explicit[step]...), nil
	}
	B := p.spec.GlobalBatch
	counts := p.Counts(step)
	cur := p.cursor(step)
	out := make([]Slot, 0, B)
	for i, c := range counts {
		for k := 0; k < c; k++ {
			out = append(out, p.draw(i, cur[i]+uint64(k)))
		}
	}
	// Fisher-Yates with per-position draws, so every rank sees a mix of sources.
	for k := B - 1; k >= 1; k-- {
		j := int(H64("slot", p.spec.Seed, step, uint64(k)) % uint64(k+1))
		out[k], out[j] = out[j], out[k]
	}
	return out, nil
}

// RankRange returns the slots [lo, hi) of the global batch that rank reads.
func (p *Plan) RankRange(rank int) (lo, hi int) {
	per := p.spec.GlobalBatch / p.spec.WorldSize
	return rank * per, (rank + 1) * per
}

// draw returns sample number pos of source i's endless stream.
func (p *Plan) draw(i int, pos uint64) Slot {
	n := uint64(p.sizes[i])
	epoch, j := pos/n, pos%n
	if p.spec.Sampler == Shuffle {
		j = Permute(p.spec.Seed, uint64(i), epoch, j, n)
	}
	return Slot{Source: i, Index: int(j), Epoch: epoch}
}

// Counts returns how many samples each source contributes to step: floor or ceil of
// weight share x GlobalBatch, summing to GlobalBatch, unbiased over steps (systematic
// sampling with one uniform offset per step).
func (p *Plan) Counts(step uint64) []int {
	w := p.srcW
	if len(p.spec.Phases) > 0 {
		w = p.spec.weightsAt(step)
	}
	B := p.spec.GlobalBatch
	sum := 0.0
	for _, x := range w {
		sum += x
	}
	u := Unit(H64("mix", p.spec.Seed, step))
	counts := make([]int, len(w))
	c, prev := 0.0, 0
	for i, x := range w {
		c += x * float64(B) / sum
		n := below(c, u, B)
		if i == len(w)-1 {
			n = B
		}
		counts[i] = n - prev
		prev = n
	}
	return counts
}

// below counts k in [0, B) with u+k < c.
func below(c, u float64, B int) int {
	v := math.Ceil(c - u)
	switch {
	case v <= 0:
		return 0
	case v >= float64(B):
		return B
	}
	return int(v)
}

// cursor returns how many samples of each source were drawn before step.
func (p *Plan) cursor(step uint64) []uint64 {
	k := step / checkpointEvery
	p.mu.Lock()
	for uint64(len(p.cps)) <= k {
		last := uint64(len(p.cps) - 1)
		next := append([]uint64(nil), p.cps[last]...)
		for s := last * checkpointEvery; s < (last+1)*checkpointEvery; s++ {
			for i, c := range p.Counts(s) {
				next[i] += uint64(c)
			}
		}
		p.cps = append(p.cps, next)
	}
	from, base := k*checkpointEvery, p.cps[k]
	for _, r := range p.recent {
		if r.cur != nil && r.step <= step && r.step > from {
			from, base = r.step, r.cur
		}
	}
	cur := append([]uint64(nil), base...)
	p.mu.Unlock()
	for s := from; s < step; s++ {
		for i, c := range p.Counts(s) {
			cur[i] += uint64(c)
		}
	}
	if step%checkpointEvery != 0 {
		p.mu.Lock()
		p.recent[p.recentPos] = cursorAt{step: step, cur: append([]uint64(nil), cur...)}
		p.recentPos = (p.recentPos + 1) % recentCursors
		p.mu.Unlock()
	}
	return cur
}

// H64 is the hash every choice of the schedule draws from: the first 8 bytes, little-endian,
// of SHA-256(tag || 0x00 || u64le(x0) || u64le(x1) || ...).
func H64(tag string, xs ...uint64) uint64 {
	var buf [128]byte
	if len(tag)+1+8*len(xs) > len(buf) {
		h := sha256.New()
		h.Write([]byte(tag))
		var b [8]byte
		h.Write(b[:1])
		for _, x := range xs {
			binary.LittleEndian.PutUint64(b[:], x)
			h.Write(b[:])
		}
		var sum [sha256.Size]byte
		return binary.LittleEndian.Uint64(h.Sum(sum[:0]))
	}
	b := append(buf[:0], tag...)
	b = append(b, 0)
	for _, x := range xs {
		b = binary.LittleEndian.AppendUint64(b, x)
	}
	sum := sha256.Sum256(b)
	return binary.LittleEndian.Uint64(sum[:8])
}

// Unit maps a hash to [0, 1) with 53 bits.
func Unit(h uint64) float64 { return float64(h>>11) / (1 << 53) }

// Permute returns the image of j under the permutation of [0, n) for (seed, source,
// epoch): a 4-round Feistel network on the smallest even number of bits covering n-1,
// cycle-walking until the value falls below n. It is a bijection and keeps no state.
func Permute(seed, source, epoch, j, n uint64) uint64 {
	if n <= 1 {
		return j
	}
	nb := bits.Len64(n - 1)
	if nb < 2 {
		nb = 2
	}
	half := uint((nb + 1) / 2)
	mask := uint64(1)<<half - 1
	x := j
	for {
		l, r := x>>half, x&mask
		for round := uint64(0); round < 4; round++ {
			l, r = r, l^(H64("perm", seed, source, epoch, round, r)&mask)
		}
		x = l<<half | r
		if x < n {
			return x
		}
	}
}
