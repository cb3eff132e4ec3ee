package xformgraph

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/newtricks/newtricks/xformgraph/internal/testreq"
)

// videoClip reads a clip made by testdata/gen-video.sh, or skips.
func videoClip(t testing.TB, name string) []byte {
	t.Helper()
	dir := os.Getenv("NEWTRICKS_XFORM_MEDIA")
	if dir == "" {
		dir = filepath.Join("testdata", "media")
	}
	b, err := os.ReadFile(filepath.Join(dir, "video", name))
	if err != nil {
		testreq.Missing(t, "test clip missing (%v): run xformgraph/testdata/gen-video.sh (or make test)", err)
	}
	return b
}

func runVideoGraph(t *testing.T, js string, s Sample) *Output {
	t.Helper()
	out, err := mustCompile(t, js).Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestVideoGraphTCHW(t *testing.T) {
	clip := videoClip(t, "h264_bframes.mp4")
	for _, js := range []string{
		// Sampling and resize fused into the decode (the fast path).
		`{"version": 1, "seed": "1", "nodes": [
		  {"id": "dec", "op": "decode_video", "input": "input", "params": {"mode": "uniform", "num": 8, "width": 224, "height": 224}},
		  {"id": "t", "op": "to_tensor", "input": "dec", "params": {"layout": "TCHW", "dtype": "uint8"}}],
		 "outputs": ["t"]}`,
		// The op-per-step form.
		`{"version": 1, "seed": "1", "nodes": [
		  {"id": "dec", "op": "decode_video", "input": "input"},
		  {"id": "s", "op": "sample_frames", "input": "dec", "params": {"mode": "uniform", "num": 8}},
		  {"id": "r", "op": "resize", "input": "s", "params": {"size": [224, 224]}},
		  {"id": "t", "op": "to_tensor", "input": "r", "params": {"layout": "TCHW", "dtype": "uint8"}}],
		 "outputs": ["t"]}`,
	} {
		out := runVideoGraph(t, js, Sample{Key: "clip", Data: clip})
		tt := out.Values[0].Tensor
		if tt.DType != DTypeUint8 || tt.Layout != LayoutTCHW || len(tt.Shape) != 4 ||
			tt.Shape[0] != 8 || tt.Shape[1] != 3 || tt.Shape[2] != 224 || tt.Shape[3] != 224 {
			t.Fatalf("tensor %v %v %v", tt.DType, tt.Layout, tt.Shape)
		}
	}
}

// TestDecodeVideoSamplingMatchesStack: sparse decoding gives the same frames as decoding
// everything and picking afterwards.
func TestDecodeVideoSamplingMatchesStack(t *testing.T) {
	clip := videoClip(t, "hevc.mp4")
	s := Sample{Key: "k", Data: clip}
	sparse := runVideoGraph(t, `{"version": 1, "seed": "1", "nodes": [
	  {"id": "dec", "op": "decode_video", "input": "input", "params": {"mode": "uniform", "num": 5}}], "outputs": ["dec"]}`, s)
	full := runVideoGraph(t, `{"version": 1, "seed": "1", "nodes": [
	  {"id": "dec", "op": "decode_video", "input": "input"},
	  {"id": "s", "op": "sample_frames", "input": "dec", "params": {"mode": "uniform", "num": 5}}], "outputs": ["s"]}`, s)
	a, b := sparse.Values[0].Frames, full.Values[0].Frames
	if len(a) != 5 || len(b) != 5 {
		t.Fatalf("%d and %d frames", len(a), len(b))
	}
	for i := range a {
		if !bytes.Equal(a[i].Pix, b[i].Pix) {
			t.Errorf("frame %d differs", i)
		}
	}
}

// TestRandomSegmentDeterministic: the segment depends only on (seed, key, epoch).
func TestRandomSegmentDeterministic(t *testing.T) {
	clip := videoClip(t, "h264_gop250.mp4")
	js := `{"version": 1, "seed": "7", "nodes": [
	  {"id": "dec", "op": "decode_video", "input": "input", "params": {"mode": "random_segment", "num": 4, "stride": 2, "width": 32, "height": 32}}],
	 "outputs": ["dec"]}`
	frames := func(epoch uint64) []byte {
		out := runVideoGraph(t, js, Sample{Key: "clip", Epoch: epoch, Data: clip})
		var b []byte
		for _, f := range out.Values[0].Frames {
			b = append(b, f.Pix...)
		}
		return b
	}
	a, b := frames(3), frames(3)
	if !bytes.Equal(a, b) {
		t.Fatal("same (seed, key, epoch) gave different frames")
	}
	differs := false
	for e := uint64(0); e < 4 && !differs; e++ {
		differs = !bytes.Equal(frames(e), a)
	}
	if !differs {
		t.Error("segment does not depend on the epoch")
	}
}

func TestDecodeVideoErrors(t *testing.T) {
	cases := []struct {
		name string
		data []byte
		js   string
		want error
	}{
		{"garbage", []byte("definitely not a video file, just text"), "", ErrDecode},
		{"ffv1", videoClip(t, "unsupported_ffv1.mkv"), "", ErrUnsupported},
		{"past-end", videoClip(t, "tiny.mp4"), `{"mode": "indices", "indices": [1000]}`, ErrBadParam},
	}
	for _, c := range cases {
		params := c.js
		if params == "" {
			params = `{"mode": "uniform", "num": 2}`
		}
		g := mustCompile(t, `{"version": 1, "seed": "1", "nodes": [
		  {"id": "dec", "op": "decode_video", "input": "input", "params": `+params+`}], "outputs": ["dec"]}`)
		_, err := g.Run(context.Background(), Sample{Key: c.name, Data: c.data})
		var se *SampleError
		if !errors.As(err, &se) || se.Key != c.name || !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want a SampleError wrapping %v", c.name, err, c.want)
		}
	}
	// Decoding every frame of a clip is bounded by the output limit before decoding.
	spec, err := ParseJSON([]byte(`{"version": 1, "seed": "1", "nodes": [
	  {"id": "dec", "op": "decode_video", "input": "input"}], "outputs": ["dec"]}`))
	if err != nil {
		t.Fatal(err)
	}
	g, err := Compile(spec, nil, Limits{MaxOutputBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Run(context.Background(), Sample{Key: "big", Data: videoClip(t, "h264_bframes.mp4")}); !errors.Is(err, ErrLimit) {
		t.Errorf("75 frames of 176x144 under a 1 MiB limit: %v", err)
	}
	// Parameter errors are caught at compile time.
	spec, err = ParseJSON([]byte(`{"version": 1, "seed": "1", "nodes": [
	  {"id": "dec", "op": "decode_video", "input": "input", "params": {"mode": "fps"}}], "outputs": ["dec"]}`))
	if err == nil {
		_, err = Compile(spec, nil, Limits{})
	}
	if !errors.Is(err, ErrBadParam) {
		t.Errorf("fps without fps: %v", err)
	}
}

// TestDecodeVideoAllDeferred: decode_video (mode all) -> sample_frames decodes only the
// sampled frames, so it works under an output limit the whole stack exceeds, and gives the
// frames of the materialized stack.
func TestDecodeVideoAllDeferred(t *testing.T) {
	clip := videoClip(t, "h264_bframes.mp4")
	s := Sample{Key: "k", Data: clip}
	spec := `{"version": 1, "seed": "1", "limits": {"maxOutputBytes": "%d"}, "nodes": [
	  {"id": "dec", "op": "decode_video", "input": "input", "params": {"width": 64, "height": 48}},
	  {"id": "s", "op": "sample_frames", "input": "dec", "params": {"mode": "uniform", "num": 3}}], "outputs": [%s]}`
	sparse := runVideoGraph(t, fmt.Sprintf(spec, 3*64*48*3, `"s"`), s).Values[0].Frames
	both := runVideoGraph(t, fmt.Sprintf(spec, 1<<30, `"dec", "s"`), s)
	all, sampled := both.Values[0].Frames, both.Values[1].Frames
	if len(sparse) != 3 || len(sampled) != 3 || len(all) <= 3 {
		t.Fatalf("%d, %d, %d frames", len(sparse), len(sampled), len(all))
	}
	for i := range sparse {
		if !bytes.Equal(sparse[i].Pix, sampled[i].Pix) {
			t.Errorf("frame %d differs between the deferred and the materialized stack", i)
		}
	}
	if _, err := mustCompile(t, fmt.Sprintf(spec, 3*64*48*3, `"dec"`)).Run(context.Background(), s); !errors.Is(err, ErrLimit) {
		t.Errorf("whole stack over the limit: %v", err)
	}
}
