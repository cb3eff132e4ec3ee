package xformgraph

import (
	"crypto/sha256"
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
)

// Limits bound what one sample may cost. Zero fields take the defaults below.
type Limits struct {
	// MaxPixels bounds width*height of a decoded image or video frame, checked from the
	// header before any pixel buffer is allocated (decompression bombs). Default 64 Mpx.
	MaxPixels int64
	// MaxFrames bounds the frames one decode_video/sample_frames may return. Default 1024.
	MaxFrames int
	// MaxOutputBytes bounds each graph output: checked statically at Compile when the
	// output shape is known, and on every Run. Default 256 MiB.
	MaxOutputBytes int64
	// MaxInputBytes bounds Sample.Data. Default 1 GiB.
	MaxInputBytes int64
}

// Default limits.
const (
	DefaultMaxPixels      = 64 << 20
	DefaultMaxFrames      = 1024
	DefaultMaxOutputBytes = 256 << 20
	DefaultMaxInputBytes  = 1 << 30
)

// WithDefaults fills zero fields.
func (l Limits) WithDefaults() Limits {
	if l.MaxPixels <= 0 {
		l.MaxPixels = DefaultMaxPixels
	}
	if l.MaxFrames <= 0 {
		l.MaxFrames = DefaultMaxFrames
	}
	if l.MaxOutputBytes <= 0 {
		l.MaxOutputBytes = DefaultMaxOutputBytes
	}
	if l.MaxInputBytes <= 0 {
		l.MaxInputBytes = DefaultMaxInputBytes
	}
	return l
}

// Env is what one op invocation sees besides its input.
type Env struct {
	Key    string // Sample.Key, for error messages
	Epoch  uint64
	NodeID string
	Params Params
	Limits Limits
	// Rand is seeded from SeedFor(graph seed, key, epoch, node id); private to this call.
	Rand *rand.Rand
	// Prepared is what OpDef.Prepare built for this node at Compile (shared, read-only).
	Prepared any

	done *[]func()
}

// OnDone registers f to run when the sample's Run returns (all outputs are materialized
// by then): for handing scratch buffers that a lazy value still references back to a
// pool. Without a runner (an Env built by NewEnv alone) f never runs.
func (e *Env) OnDone(f func()) {
	if e.done != nil {
		*e.done = append(*e.done, f)
	}
}

// SeedFor derives the two PCG seed words for one op invocation:
// SHA-256(u64le(graphSeed) || u64le(epoch) || u32le(len(key)) || key || u32le(len(node)) || node),
// words = first two little-endian uint64 of the digest. Length prefixes keep (key, node)
// pairs unambiguous. This definition is part of the determinism contract (a reader in
// another language can reproduce it): do not change it without bumping the graph version.
func SeedFor(graphSeed uint64, key string, epoch uint64, nodeID string) (uint64, uint64) {
	h := sha256.New()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], graphSeed)
	h.Write(b[:])
	binary.LittleEndian.PutUint64(b[:], epoch)
	h.Write(b[:])
	binary.LittleEndian.PutUint32(b[:4], uint32(len(key)))
	h.Write(b[:4])
	h.Write([]byte(key))
	binary.LittleEndian.PutUint32(b[:4], uint32(len(nodeID)))
	h.Write(b[:4])
	h.Write([]byte(nodeID))
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return binary.LittleEndian.Uint64(sum[0:8]), binary.LittleEndian.Uint64(sum[8:16])
}

// NewEnv builds the Env for one op invocation.
func NewEnv(graphSeed uint64, key string, epoch uint64, nodeID string, p Params, lim Limits) *Env {
	s1, s2 := SeedFor(graphSeed, key, epoch, nodeID)
	return &Env{
		Key: key, Epoch: epoch, NodeID: nodeID, Params: p, Limits: lim.WithDefaults(),
		Rand: rand.New(rand.NewPCG(s1, s2)),
	}
}

// Uniform returns a float64 in [lo, hi) from r. It uses only r.Uint64 (whose PCG stream is
// fixed by definition), so the value does not depend on how a Go release implements
// Float64.
func Uniform(r *rand.Rand, lo, hi float64) float64 {
	return lo + float64((hi-lo)*float64(r.Uint64()>>11)/(1<<53))
}

// IntN returns an int in [0, n) from r by 128-bit multiply (Lemire, no rejection: the bias
// is below 2^-32 for any n used here), using only r.Uint64, for the same reason as Uniform.
func IntN(r *rand.Rand, n int) int {
	if n <= 1 {
		return 0
	}
	hi, _ := bits.Mul64(r.Uint64(), uint64(n))
	return int(hi)
}
