package video

import (
	"context"
	"testing"
)

// BenchmarkUniform8 samples 8 uniform frames at 224x224 from a one-GOP clip (open, index,
// sparse decode, close); BenchmarkDecodeAllBaseline decodes every frame of the same clip,
// the cost sparse decoding must beat.
func BenchmarkUniform8(b *testing.B) {
	data := readClip(b, "h264_gop250.mp4")
	ctx := context.Background()
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		r, err := OpenBytes(ctx, "b", data, Options{})
		if err != nil {
			b.Fatal(err)
		}
		idx, _ := Sampling{Mode: Uniform, Num: 8}.Select(r.Index(), nil, 0)
		if _, err := r.Frames(ctx, idx, Output{Width: 224, Height: 224}); err != nil {
			b.Fatal(err)
		}
		r.Close()
	}
}

func BenchmarkDecodeAllBaseline(b *testing.B) {
	data := readClip(b, "h264_gop250.mp4")
	ctx := context.Background()
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		r, err := OpenBytes(ctx, "b", data, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := r.DecodeAll(ctx, nil); err != nil {
			b.Fatal(err)
		}
		r.Close()
	}
}
