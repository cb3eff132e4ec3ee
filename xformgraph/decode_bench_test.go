package xformgraph

import (
	"testing"

	ximage "github.com/newtricks/newtricks/xformgraph/image"
)

// BenchmarkJPEGPlanes times the whole-picture JPEG decode alone (libjpeg-turbo to R, G, B
// planes): the floor under BenchmarkImagePipeline without region decoding.
func BenchmarkJPEGPlanes(b *testing.B) {
	data := benchJPEG(b)
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, _, ok, err := ximage.DecodePlanar(data, ximage.DecodeOptions{JPEG: jpegDecoder}); err != nil || !ok {
			b.Fatal(err, ok)
		}
	}
}
