package main

import (
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDraw: a chart's JSON becomes a PNG; broken input is an error naming what is wrong.
func TestDraw(t *testing.T) {
	out := filepath.Join(t.TempDir(), "c.png")
	in := `{"title": "t", "xlabel": "run", "ylabel": "clips per CPU-second",
		"series": [{"name": "a", "x": [1, 2, 3], "y": [1.9, 2.0, 1.8]}, {"name": "b", "x": [1, 2, 3], "y": [1.2, 1.1, 1.3]}]}`
	if err := draw(strings.NewReader(in), out); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		`{"title": "t"}`: "no series",
		`{"series": [{"name": "a", "x": [1, 2], "y": [1]}]}`: `series "a": 2 x and 1 y values`,
		`{"series": `: "chart JSON",
	} {
		if err := draw(strings.NewReader(in), out); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one with %q", in, err, want)
		}
	}
}
