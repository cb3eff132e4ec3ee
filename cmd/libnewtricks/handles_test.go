package main

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"testing"

	"github.com/newtricks/newtricks/xformgraph/frame"
)

const testGraph = `{"version":1,"seed":"5","nodes":[
  {"id":"d","op":"decode_image","input":"input"},
  {"id":"r","op":"resize","input":"d","params":{"size":[16]}},
  {"id":"t","op":"to_tensor","input":"r","params":{"layout":"CHW","dtype":"float32"}},
  {"id":"u","op":"to_tensor","input":"r","params":{"layout":"HWC","dtype":"uint8"}}],
 "outputs":["t","u"]}`

func testPNG(t *testing.T) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 40, 30))
	for y := 0; y < 30; y++ {
		for x := 0; x < 40; x++ {
			img.Set(x, y, color.RGBA{uint8(x * 6), uint8(y * 8), uint8(x + y), 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestCompileErrorsMapToCodes(t *testing.T) {
	tests := []struct {
		spec string
		code int
	}{
		{`{"version":1,"nodes":[{"id":"d","op":"nope","input":"input"}],"outputs":["d"]}`, codeUnknownOp},
		{`{"version":1,"nodes":[{"id":"d","op":"decode_image","input":"x"}],"outputs":["d"]}`, codeInvalidGraph},
		{`{"version":1,"nodes":[{"id":"d","op":"decode_image","input":"input"},{"id":"r","op":"resize","input":"d","params":{"size":[-1]}}],"outputs":["r"]}`, codeBadParam},
		{`{"version":`, codeInvalidGraph},
		{"\x08\x01\x22\xff", codeInvalidGraph}, // truncated binary proto
	}
	g := newGraphs()
	for _, tc := range tests {
		h, err := g.compile([]byte(tc.spec))
		if h != 0 || codeOf(err) != tc.code {
			t.Errorf("compile(%q) = %d, %v (code %d); want code %d", tc.spec, h, err, codeOf(err), tc.code)
		}
	}
	if g.len() != 0 {
		t.Fatalf("%d graphs kept after failed compiles", g.len())
	}
}

func TestRunWritesFramesAndFreeForgetsHandle(t *testing.T) {
	g := newGraphs()
	h, err := g.compile([]byte(testGraph))
	if err != nil {
		t.Fatal(err)
	}
	frames, size, err := g.run(h, "k", 3, testPNG(t))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, size)
	if err := writeFrames(buf, frames); err != nil {
		t.Fatal(err)
	}
	f1, rest, err := frame.Parse(buf)
	if err != nil {
		t.Fatal(err)
	}
	f2, rest, err := frame.Parse(rest)
	if err != nil || len(rest) != 0 {
		t.Fatalf("second frame: %v, %d bytes left", err, len(rest))
	}
	if f1.DType != 4 || f2.DType != 1 || f1.Domain == "" {
		t.Fatalf("frames %+v %+v", f1.Shape, f2.Shape)
	}
	if err := writeFrames(make([]byte, size-1), frames); err == nil {
		t.Fatal("short buffer accepted")
	}
	if _, _, err := g.run(h, "bad", 0, []byte("not an image")); codeOf(err) != codeDecode {
		t.Fatalf("corrupt sample: %v (code %d)", err, codeOf(err))
	}
	if err := g.free(h); err != nil {
		t.Fatal(err)
	}
	if err := g.free(h); codeOf(err) != codeBadHandle {
		t.Fatalf("double free: %v", err)
	}
	if _, _, err := g.run(h, "k", 0, testPNG(t)); codeOf(err) != codeBadHandle {
		t.Fatalf("run after free: %v", err)
	}
}
