package image

import "encoding/binary"

// lutRow writes dst[x] = lut[src[x]] for x < len(src) (dst at least as long). Eight
// samples per step from one 8-byte load: the loop is bound by memory operations (an AVX2
// gather measured no faster), so it does one table load and one store per sample and
// little else.
func lutRow(dst []float32, src []byte, lut *[256]float32) {
	t := lut[:] // one nil check; t[byte] needs no bounds check
	dst = dst[:len(src)]
	x := 0
	for ; x+8 <= len(src); x += 8 {
		v := binary.LittleEndian.Uint64(src[x:])
		d := dst[x : x+8 : x+8]
		d[0], d[1], d[2], d[3] = t[byte(v)], t[byte(v>>8)], t[byte(v>>16)], t[byte(v>>24)]
		d[4], d[5], d[6], d[7] = t[byte(v>>32)], t[byte(v>>40)], t[byte(v>>48)], t[byte(v>>56)]
	}
	for ; x < len(src); x++ {
		dst[x] = t[src[x]]
	}
}
