package video

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/video/index_golden.json from the current clips")

// indexSummary is what the golden file pins for each generated clip.
type indexSummary struct {
	Codec      string  `json:"codec"`
	Width      int     `json:"width"`
	Height     int     `json:"height"`
	Rotation   int     `json:"rotation"`
	Frames     int     `json:"frames"`
	Keys       []int   `json:"keys"`
	Sequential bool    `json:"sequential"`
	Duration   float64 `json:"duration_s"`
}

// TestIndexGolden pins the index of every generated clip (frame count, key frames,
// rotation...) in ../testdata/video/index_golden.json. Regenerate with -update after
// changing gen-video.sh.
func TestIndexGolden(t *testing.T) {
	mediaDir(t) // skips without clips
	golden := filepath.Join("..", "testdata", "video", "index_golden.json")
	got := map[string]indexSummary{}
	for _, c := range clips {
		r, err := OpenBytes(context.Background(), c.name, readClip(t, c.name), clipOptions(c.name))
		if err != nil {
			t.Fatal(err)
		}
		ix := r.Index()
		s := indexSummary{Codec: ix.Codec.String(), Width: ix.Width, Height: ix.Height, Rotation: ix.Rotation,
			Frames: ix.NumFrames(), Sequential: ix.Sequential, Duration: float64(int(ix.Duration()*1000)) / 1000}
		for _, k := range ix.Keys {
			s.Keys = append(s.Keys, k.Frame)
		}
		got[c.name] = s
		r.Close()
	}
	if *update {
		b, _ := json.MarshalIndent(got, "", "  ")
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	var want map[string]indexSummary
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	for name, g := range got {
		if !reflect.DeepEqual(g, want[name]) {
			t.Errorf("%s: index %+v, golden %+v", name, g, want[name])
		}
	}
}
