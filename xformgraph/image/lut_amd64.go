package image

// lutAVX2 maps bytes through a float table, 8 per step (assembly, AVX2 gathers).
//
//go:noescape
func lutAVX2(dst *float32, src *byte, n int, lut *[256]float32)

// lutRow writes dst[x] = lut[src[x]] for x < len(src) (dst at least as long).
func lutRow(dst []float32, src []byte, lut *[256]float32) {
	n := 0
	if useAVX2 {
		if n = len(src) &^ 7; n > 0 {
			dst = dst[:len(src)]
			lutAVX2(&dst[0], &src[0], n, lut)
		}
	}
	dst = dst[n:len(src)]
	for x, v := range src[n:] {
		dst[x] = lut[v]
	}
}
