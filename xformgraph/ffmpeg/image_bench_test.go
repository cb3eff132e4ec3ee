package ffmpeg

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkImageDecodeTop compares a full decode of the bench-xform JPEG with partial
// decodes of varying height (the size changes on every call, as with random crops).
func BenchmarkImageDecodeTop(b *testing.B) {
	dir := os.Getenv("NEWTRICKS_XFORM_MEDIA")
	data, err := os.ReadFile(filepath.Join(dir, "images", "photo_q90_420.jpg"))
	if dir == "" || err != nil {
		b.Skip("NEWTRICKS_XFORM_MEDIA/images/photo_q90_420.jpg not available")
	}
	d, err := NewImageDecoder("mjpeg", 1)
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	var p Picture
	for _, c := range []struct {
		name string
		rows []int
	}{{"full", []int{0}}, {"top300", []int{300}}, {"varying", []int{300, 200, 375, 250, 150, 350}}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for i := 0; b.Loop(); i++ {
				if err := d.DecodeTop(data, 0, 0, c.rows[i%len(c.rows)], &p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
