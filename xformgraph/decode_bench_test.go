package xformgraph

import (
	"testing"

	ximage "github.com/newtricks/newtricks/xformgraph/image"
)

// BenchmarkJPEGPlanes times the JPEG plane decode alone (FFmpeg mjpeg, or image/jpeg when
// the binding is absent): the floor under BenchmarkImagePipeline.
func BenchmarkJPEGPlanes(b *testing.B) {
	data := benchJPEG(b)
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, _, ok, err := ximage.DecodePlanar(data, ximage.DecodeOptions{JPEG: jpegPlanar}, 0); err != nil || !ok {
			b.Fatal(err, ok)
		}
	}
}
