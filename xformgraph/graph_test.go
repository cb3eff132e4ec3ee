package xformgraph

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/png"
	"testing"
)

const pipelineJSON = `{
  "version": 1, "name": "imagenet-train", "seed": "42",
  "nodes": [
    {"id": "dec", "op": "decode_image", "input": "input"},
    {"id": "rrc", "op": "random_resized_crop", "input": "dec", "params": {"size": [224]}},
    {"id": "flip", "op": "random_hflip", "input": "rrc"},
    {"id": "norm", "op": "normalize", "input": "flip", "params": {"mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}},
    {"id": "t", "op": "to_tensor", "input": "norm", "params": {"layout": "CHW", "dtype": "float32"}}
  ],
  "outputs": ["t"]
}`

func testPNG(t testing.TB, w, h int) []byte {
	m := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			m.Set(x, y, color.NRGBA{uint8(x * 255 / w), uint8(y * 255 / h), uint8((x ^ y) & 255), 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, m); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func mustCompile(t testing.TB, js string) *Graph {
	t.Helper()
	spec, err := ParseJSON([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	g, err := Compile(spec, nil, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestPipelineRuns(t *testing.T) {
	g := mustCompile(t, pipelineJSON)
	out, err := g.Run(context.Background(), Sample{Key: "a", Data: testPNG(t, 500, 375)})
	if err != nil {
		t.Fatal(err)
	}
	tt := out.Values[0].Tensor
	if tt.Layout != LayoutCHW || tt.DType != DTypeFloat32 || tt.Shape[0] != 3 || tt.Shape[1] != 224 || tt.Shape[2] != 224 {
		t.Fatalf("got %v %v %v", tt.Layout, tt.DType, tt.Shape)
	}
	if err := tt.Validate(); err != nil {
		t.Fatal(err)
	}
	out2, _ := g.Run(context.Background(), Sample{Key: "a", Data: testPNG(t, 500, 375)})
	if !bytes.Equal(out2.Values[0].Tensor.Data, tt.Data) {
		t.Fatal("not deterministic")
	}
	out3, _ := g.Run(context.Background(), Sample{Key: "a", Epoch: 1, Data: testPNG(t, 500, 375)})
	if bytes.Equal(out3.Values[0].Tensor.Data, tt.Data) {
		t.Fatal("epoch does not change the random crop")
	}
}

func TestCompileErrors(t *testing.T) {
	for _, tc := range []struct {
		name, js string
		want     error
	}{
		{"unknown op", `{"version":1,"nodes":[{"id":"a","op":"blur","input":"input"}],"outputs":["a"]}`, ErrUnknownOp},
		{"type mismatch", `{"version":1,"nodes":[{"id":"a","op":"hflip","input":"input"}],"outputs":["a"]}`, ErrTypeMismatch},
		{"out of range", `{"version":1,"nodes":[{"id":"a","op":"decode_image","input":"input"},{"id":"b","op":"random_hflip","input":"a","params":{"p":1.5}}],"outputs":["b"]}`, ErrBadParam},
		{"bad enum", `{"version":1,"nodes":[{"id":"a","op":"decode_image","input":"input","params":{"mode":"cmyk"}}],"outputs":["a"]}`, ErrBadParam},
		{"cycle", `{"version":1,"nodes":[{"id":"a","op":"hflip","input":"b"},{"id":"b","op":"hflip","input":"a"}],"outputs":["a"]}`, ErrInvalidGraph},
		{"dangling", `{"version":1,"nodes":[{"id":"a","op":"hflip","input":"zz"}],"outputs":["a"]}`, ErrInvalidGraph},
		{"version", `{"version":7,"nodes":[],"outputs":["a"]}`, ErrInvalidGraph},
		{"too large", `{"version":1,"limits":{"maxOutputBytes":"1000"},"nodes":[{"id":"a","op":"decode_image","input":"input"},{"id":"b","op":"resize","input":"a","params":{"size":[100,100]}}],"outputs":["b"]}`, ErrLimit},
		{"unknown field", `{"version":1,"nodez":[]}`, ErrInvalidGraph},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec, err := ParseJSON([]byte(tc.js))
			if err == nil {
				_, err = Compile(spec, nil, Limits{})
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			t.Log(err)
		})
	}
}
