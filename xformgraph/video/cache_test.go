package video

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestIndexCache: a clip opened again through a cache is not demuxed again and gives the
// same frames; a cached index that does not fit (another clip under the same key) is
// rebuilt, not used; FileIndexCache keeps the index beside the file.
func TestIndexCache(t *testing.T) {
	ctx := context.Background()
	data := readClip(t, "h264_bframes.mp4")
	other := readClip(t, "vfr.mkv")
	for _, c := range []IndexCache{NewMemoryIndexCache(2), FileIndexCache{Path: filepath.Join(t.TempDir(), "clip.mp4")}} {
		if fc, ok := c.(FileIndexCache); ok {
			if err := os.WriteFile(fc.Path, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		frames := func(data []byte, key string) ([]Frame, Stats) {
			r, err := OpenBytes(ctx, "clip", data, Options{Cache: c, CacheKey: key})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			f, err := r.Frames(ctx, []int{3, 40, 70}, Output{Width: 32, Height: 32})
			if err != nil {
				t.Fatal(err)
			}
			return f, r.Stats()
		}
		a, s1 := frames(data, "")
		b, s2 := frames(data, "")
		if s1.CachedIndex || !s2.CachedIndex {
			t.Fatalf("%T: first open cached=%v, second cached=%v", c, s1.CachedIndex, s2.CachedIndex)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("%T: frames differ with the cached index", c)
		}
		if fc, ok := c.(FileIndexCache); ok {
			x, _ := getXattr(fc.Path, XattrName)
			_, err := os.Stat(fc.Path + SidecarSuffix)
			if len(x) == 0 && err != nil {
				t.Fatalf("no %s attribute and no sidecar beside %s", XattrName, fc.Path)
			}
			t.Logf("index beside the file: xattr %d bytes, sidecar %v", len(x), err == nil)
		}
		// Another clip under the key of the first: the cached index does not fit; rebuilt.
		key := CacheKey("clip", data)
		r, err := OpenBytes(ctx, "other", other, Options{Cache: c, CacheKey: key})
		if err != nil {
			t.Fatalf("%T: a misfitting cached index failed the open: %v", c, err)
		}
		if r.Stats().CachedIndex || r.Index().NumFrames() == 0 {
			t.Fatalf("%T: misfitting cached index used", c)
		}
		r.Close()
	}
	if k1, k2 := CacheKey("a", data), CacheKey("b", data); k1 == k2 {
		t.Fatal("cache key ignores the name")
	}
}

// BenchmarkOpen: opening a clip in memory, demuxing it for its index ("index"), against
// opening it with its index from a MemoryIndexCache ("cached"), for the test media's 720p
// H.264 clip and, when bench-xform has made it, its 10 s 720p clip (bench_720p.mp4). The
// figures docs/xformgraph.md quotes come from
// `go test -run '^$' -bench BenchmarkOpen ./xformgraph/video/`.
func BenchmarkOpen(b *testing.B) {
	ctx := context.Background()
	clips := []string{"h264_720p_bt709.mp4"}
	if _, err := os.Stat(filepath.Join(mediaDir(b), "bench_720p.mp4")); err == nil {
		clips = append(clips, "bench_720p.mp4")
	}
	for _, clip := range clips {
		data := readClip(b, clip)
		for _, cached := range []bool{false, true} {
			name := clip + "/index"
			var opts Options
			if cached {
				name = clip + "/cached"
				opts = Options{Cache: NewMemoryIndexCache(1)}
				r, err := OpenBytes(ctx, "clip", data, opts)
				if err != nil {
					b.Fatal(err)
				}
				r.Close()
			}
			b.Run(name, func(b *testing.B) {
				for b.Loop() {
					r, err := OpenBytes(ctx, "clip", data, opts)
					if err != nil {
						b.Fatal(err)
					}
					if cached != r.Stats().CachedIndex {
						b.Fatalf("cached index used: %v, want %v", r.Stats().CachedIndex, cached)
					}
					r.Close()
				}
			})
		}
	}
}
