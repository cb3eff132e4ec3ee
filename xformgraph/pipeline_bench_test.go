package xformgraph

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/jpeg"
	"os"
	"path/filepath"
	"testing"
)

// benchJPEG is the benchmark input: the media file when NEWTRICKS_XFORM_MEDIA is set,
// else a synthetic 500x375 q90 JPEG.
func benchJPEG(b *testing.B) []byte {
	if d := os.Getenv("NEWTRICKS_XFORM_MEDIA"); d != "" {
		if data, err := os.ReadFile(filepath.Join(d, "images", "photo_q90_420.jpg")); err == nil {
			return data
		}
	}
	src, _, err := image.Decode(bytes.NewReader(testPNG(b, 500, 375)))
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, src, &jpeg.Options{Quality: 90}); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkImagePipeline is the bench-xform image pipeline: JPEG 500x375 q90 ->
// random_resized_crop 224 -> random flip -> normalize -> CHW float32. The decode-only
// baseline is measured in the same run.
func BenchmarkImagePipeline(b *testing.B) {
	data := benchJPEG(b)
	g := mustCompile(b, pipelineJSON)
	dec := mustCompile(b, `{"version":1,"nodes":[{"id":"d","op":"decode_image","input":"input"},{"id":"t","op":"to_tensor","input":"d","params":{"dtype":"uint8","layout":"HWC"}}],"outputs":["t"]}`)
	for _, c := range []struct {
		name string
		g    *Graph
	}{{"pipeline", g}, {"decode", dec}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for i := 0; b.Loop(); i++ {
				if _, err := c.g.Run(context.Background(), Sample{Key: fmt.Sprint(i % 64), Data: data}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
