package image

// hpass2SSE2 is the two-row horizontal pass with k <= 8 taps (assembly, SSE2).
//
//go:noescape
func hpass2SSE2(ra, rb *byte, ta, tb *float32, starts *int, w *float32, groups, k int)

// hpass prepares a fixed-tap horizontal axis for hpass2SSE2: weights transposed to
// [group of 4 outputs][tap][lane].
type hpass struct {
	c        coeffs
	wt       []float32
	maxStart int
}

func newHpass(c coeffs, wt []float32) (hpass, bool) {
	if c.k < 1 || c.k > 8 || len(c.start) < 4 {
		return hpass{}, false
	}
	groups := len(c.start) / 4
	n := groups * 4 * c.k
	if cap(wt) < n {
		wt = make([]float32, n)
	}
	wt = wt[:n]
	h := hpass{c: c, wt: wt}
	for j, s := range c.start[:groups*4] {
		h.maxStart = max(h.maxStart, s)
		g, lane := j/4, j%4
		for t := range c.k {
			wt[(g*c.k+t)*4+lane] = c.w[j*c.k+t]
		}
	}
	return h, true
}

// rows2 is horizontal2 over ra and rb; false when a row is too short for the 8-byte loads
// (the caller then runs horizontal2).
func (h *hpass) rows2(ra, rb []byte, ta, tb []float32) bool {
	if len(ra) < h.maxStart+8 || len(rb) < h.maxStart+8 || len(ta) != len(h.c.start) || len(tb) != len(ta) {
		return false
	}
	groups := len(ta) / 4
	hpass2SSE2(&ra[0], &rb[0], &ta[0], &tb[0], &h.c.start[0], &h.wt[0], groups, h.c.k)
	if n := groups * 4; n < len(ta) {
		tail := coeffs{k: h.c.k, start: h.c.start[n:], count: h.c.count[n:], w: h.c.w[n*h.c.k:]}
		horizontal2(ra, rb, ta[n:], tb[n:], tail)
	}
	return true
}
