package datasets

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRealisticKey: every parameter and the generator's version name the cache directory.
func TestRealisticKey(t *testing.T) {
	base := Realistic{Images: 10, Clips: 2, Seed: 1}
	if base.Key() != (Realistic{Images: 10, Clips: 2, Seed: 1, ImagesPerShard: 50, ClipsPerShard: 10}).Key() {
		t.Error("defaults and explicit defaults give different keys")
	}
	if !strings.HasPrefix(base.Key(), "v2-") {
		t.Errorf("key %q does not start with the generator version", base.Key())
	}
	seen := map[string]bool{base.Key(): true}
	for _, r := range []Realistic{
		{Images: 11, Clips: 2, Seed: 1}, {Images: 10, Clips: 3, Seed: 1}, {Images: 10, Clips: 2, Seed: 2},
		{Images: 10, Clips: 2, Seed: 1, ImagesPerShard: 5}, {Images: 10, Clips: 2, Seed: 1, ClipsPerShard: 1},
	} {
		if seen[r.Key()] {
			t.Errorf("%+v: key %q already taken", r, r.Key())
		}
		seen[r.Key()] = true
	}
}

// TestWriteRealisticCache: a complete dataset in the cache is returned without generating
// anything (no ffmpeg run: the directory holds no media a run would have made); bad requests
// are refused before anything is written.
func TestWriteRealisticCache(t *testing.T) {
	root := t.TempDir()
	r := Realistic{Images: 3, Clips: 1, Seed: 9}
	dir := filepath.Join(root, "realistic-"+r.Key())
	if err := os.MkdirAll(filepath.Join(dir, "jpeg"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "jpeg", "shard-000.tar"), make([]byte, 1024), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "COMPLETE"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := WriteRealistic(root, r, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !d.Cached || d.Root != dir || d.Images != filepath.Join(dir, "jpeg") || d.Bytes != 1024+3 {
		t.Errorf("got %+v, want the cached copy at %s (1027 bytes)", d, dir)
	}
	for _, bad := range []Realistic{{Images: 0, Clips: 1}, {Images: 1, Clips: 0}, {Images: maxRealistic + 1, Clips: 1}, {Images: 1, Clips: 1, ImagesPerShard: -1}} {
		if _, err := WriteRealistic(root, bad, 1, nil); err == nil {
			t.Errorf("%+v: want an error", bad)
		}
	}
	if _, err := WriteRealistic("", r, 1, nil); err == nil {
		t.Error("no cache directory: want an error")
	}
}

// TestShardMedia: the media members of tar shards come back in order, without the other
// members; asking for more than there are is an error.
func TestShardMedia(t *testing.T) {
	dir := t.TempDir()
	m := Media{Images: []Item{{Ext: "jpg", Data: []byte("one")}, {Ext: "png", Data: []byte("two")}, {Ext: "jpg", Data: []byte("three")}}}
	if _, err := Write(dir, m, Layout{Shards: 2, PerShard: 3, Captions: true}); err != nil {
		t.Fatal(err)
	}
	got, err := ShardMedia(dir, 5)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"one", "two", "three", "one", "two"}
	if len(got) != len(want) {
		t.Fatalf("got %d items, want %d", len(got), len(want))
	}
	for i, w := range want {
		if string(got[i].Data) != w {
			t.Errorf("item %d = %q (%s), want %q", i, got[i].Data, got[i].Ext, w)
		}
	}
	if _, err := ShardMedia(dir, 7); err == nil {
		t.Error("7 of 6 media members: want an error")
	}
}
