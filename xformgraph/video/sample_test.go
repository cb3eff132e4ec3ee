package video

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/newtricks/newtricks/xformgraph/ffmpeg"
	"github.com/newtricks/newtricks/xformgraph/internal/testreq"
)

// cfrIndex is a 30-frame clip at 10 fps (time base 1/10).
func cfrIndex(n int) *Index {
	ix := &Index{TimeBase: ffmpeg.Rational{Num: 1, Den: 10}, Keys: []Key{{Frame: 0}}}
	for i := 0; i < n; i++ {
		ix.PTS = append(ix.PTS, int64(i))
	}
	return ix
}

func TestSelect(t *testing.T) {
	ix := cfrIndex(30)
	fixed := func(v int) func(int) int { return func(n int) int { return min(v, n-1) } }
	for _, c := range []struct {
		s    Sampling
		rand func(int) int
		want []int
		err  error
	}{
		{s: Sampling{Mode: Uniform, Num: 3}, want: []int{5, 15, 25}},
		{s: Sampling{Mode: Uniform, Num: 1}, want: []int{15}},
		{s: Sampling{Mode: Uniform, Num: 4}, want: []int{3, 11, 18, 26}},
		{s: Sampling{Mode: Uniform, Num: 40}, want: nil /* checked by length */},
		{s: Sampling{Mode: Stride, Stride: 10, Start: 2}, want: []int{2, 12, 22}},
		{s: Sampling{Mode: Stride, Stride: 10, Num: 2}, want: []int{0, 10}},
		{s: Sampling{Mode: FPS, FPS: 2}, want: []int{0, 5, 10, 15, 20, 25}},
		{s: Sampling{Mode: FPS, FPS: 20, Num: 4}, want: []int{0, 0, 1, 1}},
		{s: Sampling{Mode: RandomSegment, Num: 3, Stride: 4}, rand: fixed(7), want: []int{7, 11, 15}},
		{s: Sampling{Mode: RandomSegment, Num: 3, Stride: 20}, rand: fixed(7), want: []int{0, 20, 29}},
		{s: Sampling{Mode: Indices, Indices: []int{-1, 0, 5}}, want: []int{29, 0, 5}},
		{s: Sampling{Mode: Indices, Indices: []int{30}}, err: ErrFrameRange},
		{s: Sampling{Mode: Timestamps, Times: []float64{0, 0.99, 1.0, 2.95}}, want: []int{0, 9, 10, 29}},
		{s: Sampling{Mode: Timestamps, Times: []float64{3.5}}, err: ErrFrameRange},
		{s: Sampling{Mode: Uniform, Num: 2000}, err: ErrLimit},
		{s: Sampling{Mode: "bogus"}, err: ErrFrameRange},
	} {
		got, err := c.s.Select(ix, c.rand, 1024)
		if c.err != nil {
			if !errors.Is(err, c.err) {
				t.Errorf("%+v: err %v, want %v", c.s, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%+v: %v", c.s, err)
			continue
		}
		if c.want == nil {
			if len(got) != c.s.Num {
				t.Errorf("%+v: %d frames", c.s, len(got))
			}
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%+v: got %v, want %v", c.s, got, c.want)
		}
	}
}

// TestVFRTimestamps: on a variable-frame-rate clip, the index holds the real presentation
// times (ffprobe's) and timestamp sampling picks the frame on screen at each time.
func TestVFRTimestamps(t *testing.T) {
	path := filepath.Join(mediaDir(t), "vfr.mkv")
	if _, err := exec.LookPath("ffprobe"); err != nil {
		testreq.Missing(t, "no ffprobe on PATH")
	}
	out, err := exec.Command("ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
		"frame=pts_time", "-of", "csv=p=0", path).Output()
	if err != nil {
		t.Fatal(err)
	}
	var times []float64
	for _, l := range strings.Fields(string(out)) {
		v, err := strconv.ParseFloat(strings.TrimSuffix(l, ","), 64)
		if err != nil {
			t.Fatal(err)
		}
		times = append(times, v)
	}
	r, err := OpenBytes(context.Background(), "vfr", readClip(t, "vfr.mkv"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ix := r.Index()
	if ix.NumFrames() != len(times) {
		t.Fatalf("%d frames, ffprobe %d", ix.NumFrames(), len(times))
	}
	gaps := 0
	for i := range times {
		if d := ix.Time(i) - (times[i] - times[0]); d > 1e-3 || d < -1e-3 {
			t.Fatalf("frame %d at %.4fs, ffprobe %.4fs", i, ix.Time(i), times[i]-times[0])
		}
		if i > 0 && times[i]-times[i-1] > 0.05 {
			gaps++
		}
	}
	if gaps == 0 {
		t.Fatal("clip is not variable frame rate")
	}
	// Just before and at each frame's time.
	for i := 1; i < len(times); i++ {
		at, before := ix.FrameAt(ix.Time(i)), ix.FrameAt(ix.Time(i)-0.001)
		if at != i || before != i-1 {
			t.Fatalf("FrameAt around frame %d: %d, %d", i, before, at)
		}
	}
}
