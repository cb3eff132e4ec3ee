package video

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/newtricks/newtricks/xformgraph/ffmpeg"
	"github.com/newtricks/newtricks/xformgraph/internal/testreq"
)

// mediaDir returns the generated clips directory (xformgraph/testdata/gen-video.sh), or
// skips the test when the clips are missing.
func mediaDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("NEWTRICKS_XFORM_MEDIA")
	if dir == "" {
		dir = filepath.Join("..", "testdata", "media")
	}
	dir = filepath.Join(dir, "video")
	if _, err := os.Stat(filepath.Join(dir, "h264_bframes.mp4")); err != nil {
		testreq.Missing(t, "test clips missing in %s: run xformgraph/testdata/gen-video.sh (or make test)", dir)
	}
	return dir
}

func readClip(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(mediaDir(t), name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ffmpegFrames decodes every frame of clip with the ffmpeg CLI into packed RGB24 frames of
// w x h (after the CLI's autorotation), with the CLI's default conversion (-sws_flags not
// given: bicubic, no exactness flags). vf may add a scale filter.
func ffmpegFrames(t testing.TB, clip string, w, h int, vf string) [][]byte {
	t.Helper()
	return ffmpegFramesFlags(t, clip, w, h, vf, "")
}

// ffmpegFramesFlags is ffmpegFrames with the CLI's -sws_flags (empty: the CLI's default).
func ffmpegFramesFlags(t testing.TB, clip string, w, h int, vf, swsFlags string) [][]byte {
	t.Helper()
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		testreq.Missing(t, "ffmpeg CLI not on PATH")
	}
	args := []string{"-hide_banner", "-loglevel", "error", "-nostdin", "-threads", "1", "-i", clip}
	if vf != "" {
		args = append(args, "-vf", vf)
	}
	if swsFlags != "" {
		args = append(args, "-sws_flags", swsFlags)
	}
	args = append(args, "-fps_mode", "passthrough", "-pix_fmt", "rgb24", "-f", "rawvideo", "-")
	var out, stderr bytes.Buffer
	cmd := exec.Command("ffmpeg", args...)
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("ffmpeg %v: %v\n%s", args, err, stderr.String())
	}
	return splitFrames(t, "ffmpeg", out.Bytes(), w, h)
}

func splitFrames(t testing.TB, who string, b []byte, w, h int) [][]byte {
	t.Helper()
	fs := w * h * 3
	if len(b)%fs != 0 {
		t.Fatalf("%s output %d bytes is not a multiple of %dx%d frames", who, len(b), w, h)
	}
	var frames [][]byte
	for ; len(b) > 0; b = b[fs:] {
		frames = append(frames, b[:fs])
	}
	return frames
}

func psnr(a, b []byte) float64 {
	var se float64
	for i := range a {
		d := float64(a[i]) - float64(b[i])
		se += d * d
	}
	if se == 0 {
		return math.Inf(1)
	}
	mse := se / float64(len(a))
	return 10 * math.Log10(255*255/mse)
}

var clips = []struct {
	name  string
	codec ffmpeg.CodecID
	w, h  int // delivered size, after rotation
}{
	{"h264_bframes.mp4", ffmpeg.CodecH264, 176, 144},
	{"h264_gop250.mp4", ffmpeg.CodecH264, 176, 144},
	{"hevc.mp4", ffmpeg.CodecHEVC, 176, 144},
	{"hevc10.mkv", ffmpeg.CodecHEVC, 176, 144},
	{"vp9.webm", ffmpeg.CodecVP9, 176, 144},
	{"mpeg4.mp4", ffmpeg.CodecMPEG4, 176, 144},
	{"vfr.mkv", ffmpeg.CodecH264, 176, 144},
	{"rotate90.mp4", ffmpeg.CodecH264, 144, 176},
	{"odd_321x241.webm", ffmpeg.CodecVP9, 321, 241},
	{"odd_321x241_444.mp4", ffmpeg.CodecH264, 321, 241},
	{"odd_321x240.webm", ffmpeg.CodecVP9, 321, 240},
	{"h264_720p_bt709.mp4", ffmpeg.CodecH264, 1280, 720},
	{"h264_fullrange.mp4", ffmpeg.CodecH264, 176, 144},
	{"h264_422.mp4", ffmpeg.CodecH264, 176, 144},
	{"raw.h264", ffmpeg.CodecH264, 176, 144},           // no timestamps: Sequential
	{"mpeg4_bframes.avi", ffmpeg.CodecMPEG4, 176, 144}, // B-frames without pts: Sequential
}

// resizePSNR is the bound newtricks' resized frames keep against decord's and against the
// ffmpeg CLI's scale filter with the same filter and size (docs/xformgraph.md).
const resizePSNR = 45.0

// clipOptions are the options a test opens clip name with. The raw H.264 elementary stream
// has no container, which a sample may not use (ffmpeg.DefaultFormats), but it is the one
// clip without any timestamps, so the tests allow its demuxer.
func clipOptions(name string) Options {
	if name == "raw.h264" {
		return Options{Formats: []string{"h264"}}
	}
	return Options{}
}

// sampleIndices is the sparse, out-of-order sample the comparisons take of n frames.
func sampleIndices(n int) []int {
	return []int{n - 1, 0, n / 2, 5 % n, n / 3, 5 % n, n - 2, 1, 2 * n / 3}
}

// TestFramesMatchFFmpeg checks sparse, out-of-order samples against the ffmpeg CLI's decode
// of the same frames with its default conversion (no exactness flags). At native size they
// are equal bit for bit, with the bicubic filter (the CLI's default) and with bilinear
// (newtricks' and decord's default; the filter matters only where swscale interpolates
// chroma: odd heights, 10-bit). Resized, the frames are within resizePSNR of the CLI's
// scale filter with the same filter.
func TestFramesMatchFFmpeg(t *testing.T) {
	dir := mediaDir(t)
	ctx := context.Background()
	for _, c := range clips {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, c.name)
			data := readClip(t, c.name)
			r, err := OpenBytes(ctx, c.name, data, clipOptions(c.name))
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			ix := r.Index()
			if ix.Codec != c.codec {
				t.Errorf("codec %s, want %s", ix.Codec, c.codec)
			}
			if seq := c.name == "raw.h264" || c.name == "mpeg4_bframes.avi"; ix.Sequential != seq {
				t.Errorf("Sequential = %v, want %v", ix.Sequential, seq)
			}
			n := ix.NumFrames()
			idx := sampleIndices(n)
			for _, filter := range []struct {
				name  string
				scale ffmpeg.ScaleFlags
			}{{"bicubic", ffmpeg.ScaleBicubic}, {"bilinear", 0}} {
				flags := ""
				if filter.name != "bicubic" {
					flags = filter.name
				}
				ref := ffmpegFramesFlags(t, path, c.w, c.h, "", flags)
				if n != len(ref) {
					t.Fatalf("index has %d frames, ffmpeg decodes %d", n, len(ref))
				}
				got, err := r.Frames(ctx, idx, Output{Scale: filter.scale})
				if err != nil {
					t.Fatal(err)
				}
				for k, f := range got {
					if f.Index != idx[k] || f.Width != c.w || f.Height != c.h {
						t.Fatalf("frame %d: got index %d %dx%d", idx[k], f.Index, f.Width, f.Height)
					}
					if !bytes.Equal(f.Pix, ref[f.Index]) {
						t.Errorf("%s: frame %d differs from ffmpeg -sws_flags %s: PSNR %.1f dB", filter.name, f.Index, filter.name, psnr(f.Pix, ref[f.Index]))
					}
				}
			}
			// Resized in the same pass, against ffmpeg's scale filter.
			const rw, rh = 64, 48
			refS := ffmpegFrames(t, path, rw, rh, "scale="+strconv.Itoa(rw)+":"+strconv.Itoa(rh)+":flags=bilinear")
			got, err := r.Frames(ctx, []int{n / 4, 3 * n / 4, 0}, Output{Width: rw, Height: rh})
			if err != nil {
				t.Fatal(err)
			}
			same, worst := 0, math.Inf(1)
			for _, f := range got {
				p := psnr(f.Pix, refS[f.Index])
				if p < resizePSNR {
					t.Errorf("resized frame %d: PSNR %.1f dB < %.0f against ffmpeg's scale filter", f.Index, p, resizePSNR)
				}
				if math.IsInf(p, 1) {
					same++
				}
				worst = min(worst, p)
			}
			t.Logf("resized %dx%d bilinear vs ffmpeg scale filter: %d/%d identical, min PSNR %.1f dB", rw, rh, same, len(got), worst)
		})
	}
}

// TestCachedIndex: a serialized index gives the same frames without the demux pass.
func TestCachedIndex(t *testing.T) {
	ctx := context.Background()
	data := readClip(t, "h264_bframes.mp4")
	r, err := OpenBytes(ctx, "a", data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := r.Frames(ctx, []int{40, 3}, Output{})
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	blob, err := r.Index().MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var ix Index
	if err := ix.UnmarshalBinary(blob); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(ix) != fmt.Sprint(*r.Index()) {
		t.Fatalf("round trip:\n%v\n%v", ix, *r.Index())
	}
	r2, err := OpenBytes(ctx, "a", data, Options{Index: &ix})
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	got, err := r2.Frames(ctx, []int{40, 3}, Output{})
	if err != nil {
		t.Fatal(err)
	}
	for k := range got {
		if !bytes.Equal(got[k].Pix, want[k].Pix) {
			t.Errorf("frame %d differs with the cached index", want[k].Index)
		}
	}
	if _, err := OpenBytes(ctx, "b", readClip(t, "hevc.mp4"), Options{Index: &ix}); err == nil {
		t.Error("index of another clip accepted")
	}
}

// TestDecodeAllThenFrames: a reader can decode everything, then sample (the decoder is
// drained in between), and a full decode yields every indexed frame.
func TestDecodeAllThenFrames(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"h264_gop250.mp4", "vp9.webm", "hevc10.mkv"} {
		r, err := OpenBytes(ctx, name, readClip(t, name), Options{})
		if err != nil {
			t.Fatal(err)
		}
		n, err := r.DecodeAll(ctx, nil)
		if err != nil || n != r.Index().NumFrames() {
			t.Fatalf("%s: DecodeAll %d frames of %d: %v", name, n, r.Index().NumFrames(), err)
		}
		if _, err := r.Frames(ctx, []int{3, 0}, Output{Width: 16, Height: 16}); err != nil {
			t.Fatalf("%s: Frames after DecodeAll: %v", name, err)
		}
		r.Close()
	}
}

// TestSparseWork: a sample seeks to the nearest key frame (not the start) and skips
// unreferenced frames it does not need.
func TestSparseWork(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		clip       string
		frame      int
		maxPackets int
	}{
		{"h264_bframes.mp4", 70, 30}, // keys every 24 frames: from 48
		{"hevc.mp4", 70, 30},
		{"vp9.webm", 45, 15}, // keys every 20 frames: from 40
		{"vfr.mkv", 65, 30},
	} {
		r, err := OpenBytes(ctx, c.clip, readClip(t, c.clip), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Frames(ctx, []int{c.frame}, Output{}); err != nil {
			t.Fatal(err)
		}
		s := r.Stats()
		r.Close()
		if s.Seeks != 1 || s.Packets > c.maxPackets {
			t.Errorf("%s frame %d: %+v, want 1 seek and <= %d packets", c.clip, c.frame, s, c.maxPackets)
		}
	}
	r, err := OpenBytes(ctx, "gop250", readClip(t, "h264_gop250.mp4"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Frames(ctx, []int{90}, Output{}); err != nil {
		t.Fatal(err)
	}
	if s := r.Stats(); s.Frames > 75 {
		t.Errorf("frame 90 of a one-GOP clip decoded %d frames: unreferenced frames not skipped", s.Frames)
	}
}

// TestTenBitToEightBit: a 10-bit HEVC clip converted to 8-bit RGB (swscale's scaler, which
// interpolates the chroma rows; no special converter takes 10-bit input) equals the ffmpeg
// CLI's output bit for bit both with its default flags (bicubic alone) and with the
// exactness flags newtricks' swscale scalers always add (accurate_rnd+bitexact): for a
// same-size conversion the scaler runs plain C either way.
func TestTenBitToEightBit(t *testing.T) {
	path := filepath.Join(mediaDir(t), "hevc10.mkv")
	ctx := context.Background()
	r, err := OpenBytes(ctx, "hevc10", readClip(t, "hevc10.mkv"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n := r.Index().NumFrames()
	idx := []int{0, n / 3, n - 1}
	got, err := r.Frames(ctx, idx, Output{Scale: ffmpeg.ScaleBicubic}) // the CLI's default filter
	if err != nil {
		t.Fatal(err)
	}
	w, h := got[0].Width, got[0].Height
	exact := ffmpegFramesFlags(t, path, w, h, "", "bicubic+accurate_rnd+bitexact")
	def := ffmpegFramesFlags(t, path, w, h, "", "")
	for _, f := range got {
		if !bytes.Equal(f.Pix, exact[f.Index]) {
			t.Errorf("frame %d differs from ffmpeg -sws_flags bicubic+accurate_rnd+bitexact (PSNR %.1f dB)", f.Index, psnr(f.Pix, exact[f.Index]))
		}
		if !bytes.Equal(f.Pix, def[f.Index]) {
			t.Errorf("frame %d differs from the CLI's default conversion (PSNR %.1f dB)", f.Index, psnr(f.Pix, def[f.Index]))
		}
	}
}
