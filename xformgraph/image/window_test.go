package image

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// resampleRef is the two passes written plainly: the whole horizontal pass into a float
// image, then the vertical one (the order of operations resamplePlane must keep).
func resampleRef(src []byte, stride int, cx, cy coeffs) []byte {
	ow, oh := len(cx.start), len(cy.start)
	lo, hi := 1<<30, 0
	for i := range oh {
		lo, hi = min(lo, cy.start[i]), max(hi, cy.start[i]+cy.count[i])
	}
	tmp := make([]float32, (hi-lo)*ow)
	for r := lo; r < hi; r++ {
		for j := range ow {
			var s float32
			for k := range cx.count[j] {
				s += float32(cx.w[j*cx.k+k] * float32(src[r*stride+cx.start[j]+k]))
			}
			tmp[(r-lo)*ow+j] = s
		}
	}
	out := make([]byte, ow*oh)
	for i := range oh {
		vsumGo(out[i*ow:(i+1)*ow], tmp[(cy.start[i]-lo)*ow:], ow, cy.w[i*cy.k:i*cy.k+cy.count[i]])
	}
	return out
}

// TestResampleWindowMatchesTwoPasses checks the sliding-window resample (SSE2 and AVX2)
// against the plain two passes for shrinks up to 10x (taps skipping rows), enlargements,
// flips and regions taller than the window.
func TestResampleWindowMatchesTwoPasses(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	cases := 0
	for range 300 {
		inW, inH := 8+r.IntN(700), 8+r.IntN(700)
		stride := inW + r.IntN(9)
		src := make([]byte, stride*inH)
		for i := range src {
			src[i] = byte(r.IntN(256))
		}
		x0, y0 := r.Float64()*float64(inW)/3, r.Float64()*float64(inH)/3
		x1, y1 := float64(inW)-r.Float64()*float64(inW)/3, float64(inH)-r.Float64()*float64(inH)/3
		ow, oh := 1+r.IntN(300), 1+r.IntN(300)
		f := []Filter{FilterBilinear, FilterBicubic, FilterBox, FilterNearest}[r.IntN(4)]
		cx := makeCoeffs(inW, x0, x1, ow, f).window(0, ow, r.IntN(2) == 0)
		cy := makeCoeffs(inH, y0, y1, oh, f)
		want := resampleRef(src, stride, cx, cy)
		for _, avx := range avxModes() {
			setAVX2(avx)
			got := make([]byte, ow*oh)
			var rows int
			resamplePlane(src, stride, 1, cx, cy, got, ow, func(i int, row []byte) { rows++ })
			if rows != oh {
				t.Fatalf("%d rows emitted, want %d", rows, oh)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%dx%d box (%.1f,%.1f)-(%.1f,%.1f) -> %dx%d filter %d avx2=%v: differs", inW, inH, x0, y0, x1, y1, ow, oh, f, avx)
			}
			cases++
		}
		setAVX2(defaultAVX2)
	}
	t.Logf("%d cases", cases)
}
