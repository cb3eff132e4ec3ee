//go:build !amd64

package image

const haveVsum = false

func vsum(d []byte, src []float32, stride int, w []float32) { vsumGo(d, src, stride, w) }
