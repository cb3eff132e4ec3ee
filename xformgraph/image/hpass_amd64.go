package image

import (
	"os"

	"golang.org/x/sys/cpu"
)

// hpass2SSE2 is the two-row horizontal pass with k <= 8 taps (assembly, SSE2).
//
//go:noescape
func hpass2SSE2(ra, rb *byte, ta, tb *float32, starts *int, w *float32, groups, k int)

// hpass2AVX2 is the two-row horizontal pass with 8 outputs per step (assembly, AVX2).
//
//go:noescape
func hpass2AVX2(ra, rb *byte, ta, tb *float32, bases *int, masks *byte, w *float32, groups, k int)

// useAVX2 picks the AVX2 passes at run time. They compute the same float operations in the
// same order as the SSE2 and Go passes (a multiply and an add per tap, never fused), so
// the bytes do not depend on it; NT_XFORM_NOAVX2=1 turns it off (the golden tests run a
// child that way).
var useAVX2 = cpu.X86.HasAVX2 && os.Getenv("NT_XFORM_NOAVX2") != "1"

// AVX2 reports whether the resample passes use AVX2 in this process.
func AVX2() bool { return useAVX2 }

// hpass prepares a fixed-tap horizontal axis for the assembly passes. SSE2: weights
// transposed to [group of 4 outputs][tap][lane]. AVX2: groups of 8 outputs, each half
// reading one 16-byte window of the row, with a byte-shuffle mask and 8 weights per tap.
type hpass struct {
	c        coeffs
	wt       []float32
	maxStart int

	avx     bool
	groups8 int
	bases   []int     // [group][2]: window start of outputs 0-3 and 4-7
	masks   []byte    // [group][tap][32]
	wt8     []float32 // [group][tap][8]
	maxBase int       // rows must hold maxBase+16 bytes
}

// newHpass prepares c (fixed taps) for rows of srcW samples; buf, if not nil, is reused
// for the tables. ok is false when no assembly pass applies.
func newHpass(c coeffs, srcW int, buf *hpass) (*hpass, bool) {
	if c.k < 1 || c.k > 8 || len(c.start) < 4 {
		return nil, false
	}
	h := buf
	if h == nil {
		h = new(hpass)
	}
	h.c, h.maxStart, h.avx, h.maxBase = c, 0, false, 0
	if useAVX2 && h.prepareAVX2(srcW) {
		return h, true
	}
	groups := len(c.start) / 4
	n := groups * 4 * c.k
	if cap(h.wt) < n {
		h.wt = make([]float32, n)
	}
	wt := h.wt[:n]
	h.wt = wt
	for j, s := range c.start[:groups*4] {
		h.maxStart = max(h.maxStart, s)
		g, lane := j/4, j%4
		for t := range c.k {
			wt[(g*c.k+t)*4+lane] = c.w[j*c.k+t]
		}
	}
	return h, true
}

// prepareAVX2 builds the AVX2 tables; false when some group of 4 outputs does not read
// within 16 consecutive bytes (a shrink by more than about 3x) or the rows are too short.
func (h *hpass) prepareAVX2(srcW int) bool {
	c := h.c
	k := c.k
	groups := len(c.start) / 8
	if groups == 0 || srcW < 16 {
		return false
	}
	if cap(h.bases) < 2*groups {
		h.bases = make([]int, 2*groups)
	}
	if cap(h.masks) < groups*k*32 {
		h.masks = make([]byte, groups*k*32)
	}
	if cap(h.wt8) < groups*k*8 {
		h.wt8 = make([]float32, groups*k*8)
	}
	bases, masks, wt8 := h.bases[:2*groups], h.masks[:groups*k*32], h.wt8[:groups*k*8]
	for g := range groups {
		for half := range 2 {
			j0 := g*8 + half*4
			lo, hi := c.start[j0], c.start[j0]
			for _, s := range c.start[j0 : j0+4] {
				lo, hi = min(lo, s), max(hi, s)
			}
			base := max(min(lo, srcW-16), 0)
			if hi+k-base > 16 || lo < base {
				return false
			}
			bases[2*g+half] = base
			h.maxBase = max(h.maxBase, base)
			for lane := range 4 {
				j := j0 + lane
				for t := range k {
					m := masks[(g*k+t)*32+half*16+lane*4:]
					m[0], m[1], m[2], m[3] = byte(c.start[j]+t-base), 0x80, 0x80, 0x80
					wt8[(g*k+t)*8+half*4+lane] = c.w[j*k+t]
				}
			}
		}
	}
	h.bases, h.masks, h.wt8, h.groups8, h.avx = bases, masks, wt8, groups, true
	return true
}

// rows2 is horizontal2 over ra and rb; false when a row is too short for the assembly
// loads (the caller then runs horizontal2).
func (h *hpass) rows2(ra, rb []byte, ta, tb []float32) bool {
	if len(ta) != len(h.c.start) || len(tb) != len(ta) {
		return false
	}
	n := 0
	if h.avx {
		if len(ra) < h.maxBase+16 || len(rb) < h.maxBase+16 {
			return false
		}
		hpass2AVX2(&ra[0], &rb[0], &ta[0], &tb[0], &h.bases[0], &h.masks[0], &h.wt8[0], h.groups8, h.c.k)
		n = h.groups8 * 8
	} else {
		if len(ra) < h.maxStart+8 || len(rb) < h.maxStart+8 {
			return false
		}
		groups := len(ta) / 4
		hpass2SSE2(&ra[0], &rb[0], &ta[0], &tb[0], &h.c.start[0], &h.wt[0], groups, h.c.k)
		n = groups * 4
	}
	if n < len(ta) {
		tail := coeffs{k: h.c.k, start: h.c.start[n:], count: h.c.count[n:], w: h.c.w[n*h.c.k:]}
		horizontal2(ra, rb, ta[n:], tb[n:], tail)
	}
	return true
}

// rowLen is the row length rows2 needs.
func (h *hpass) rowLen() int {
	if h.avx {
		return h.maxBase + 16
	}
	return h.maxStart + 8
}

// setAVX2 switches the AVX2 passes (tests only: not safe while passes run).
func setAVX2(on bool) { useAVX2 = on && cpu.X86.HasAVX2 }
