package image

// vsumSSE2 is the vertical pass over k consecutive rows of tmp (assembly, SSE2).
//
//go:noescape
func vsumSSE2(dst *byte, n int, src *float32, stride int, w *[4]float32, k int)

// vsumAVX2 is the vertical pass, 32 outputs per step (assembly, AVX2).
//
//go:noescape
func vsumAVX2(dst *byte, n int, src *float32, stride int, w *float32, k int)

const haveVsum = true

// vsum writes round8(sum_t w[t]*rows[t][x]) for x < len(d), rows t at src[t*stride:].
func vsum(d []byte, src []float32, stride int, w []float32) {
	var wv [8][4]float32
	k := len(w)
	if k > len(wv) || k == 0 {
		vsumGo(d, src, stride, w)
		return
	}
	if need := (k-1)*stride + len(d); len(src) < need {
		panic("vsum: short source")
	}
	x0 := 0
	if useAVX2 {
		if x0 = len(d) &^ 31; x0 > 0 {
			vsumAVX2(&d[0], x0, &src[0], stride, &w[0], k)
		}
	}
	for t, x := range w {
		wv[t] = [4]float32{x, x, x, x}
	}
	n := len(d) &^ 3
	if n > x0 {
		vsumSSE2(&d[x0], n-x0, &src[x0], stride, &wv[0], k)
	}
	for x := n; x < len(d); x++ {
		var s float32
		for t, wt := range w {
			s += wt * src[t*stride+x]
		}
		d[x] = round8(s)
	}
}
