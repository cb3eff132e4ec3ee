package image

// yccIndexSSE2 computes the fused colour pass's table indices for n pixels, n % 8 == 0
// (assembly, SSE2).
//
//go:noescape
func yccIndexSSE2(y, cb, cr *byte, n int, ri, gi, bi *uint16)

// yccIndex fills ri, gi, bi (len(y) each) with yccIndexGo's values.
func yccIndex(y, cb, cr []byte, ri, gi, bi []uint16) {
	n := len(y) &^ 7
	if n > 0 && len(cb) >= n && len(cr) >= n && len(ri) >= n && len(gi) >= n && len(bi) >= n {
		yccIndexSSE2(&y[0], &cb[0], &cr[0], n, &ri[0], &gi[0], &bi[0])
	} else {
		n = 0
	}
	yccIndexGo(y[n:], cb[n:], cr[n:], ri[n:], gi[n:], bi[n:])
}
