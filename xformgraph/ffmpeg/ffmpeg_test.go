package ffmpeg

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/newtricks/newtricks/xformgraph/internal/testreq"
)

func TestErrorIs(t *testing.T) {
	for _, c := range []struct {
		err    error
		target error
		want   bool
	}{
		{ErrEOF, io.EOF, true},
		{ErrNotExist, fs.ErrNotExist, true},
		{ErrAgain, ErrAgain, true},
		{ErrInvalidData, ErrEOF, false},
		{Error(-13), fs.ErrPermission, true},
	} {
		if got := errors.Is(c.err, c.target); got != c.want {
			t.Errorf("errors.Is(%v, %v) = %v", c.err, c.target, got)
		}
	}
	if ErrInvalidData.Error() == "" || ErrEOF.Error() == "ffmpeg: error -541478725" {
		t.Errorf("no description: %q", ErrEOF.Error())
	}
}

func TestOpenBad(t *testing.T) {
	for name, data := range map[string][]byte{
		"garbage": []byte("this is not a media file at all, just some text............"),
		"zeros":   make([]byte, 4096),
	} {
		fc, err := OpenBytes(context.Background(), data, InputOptions{})
		if err == nil {
			// Some demuxers accept anything; then there must be no decodable video.
			if _, err := fc.BestVideoStream(); err == nil {
				t.Errorf("%s: found a video stream", name)
			}
			fc.Close()
			continue
		}
		var fe Error
		if !errors.As(err, &fe) {
			t.Errorf("%s: %T %v is not an ffmpeg.Error", name, err, err)
		}
	}
	if _, err := OpenBytes(context.Background(), nil, InputOptions{}); !errors.Is(err, ErrInvalidData) {
		t.Errorf("empty: %v", err)
	}
	if _, err := OpenFile(context.Background(), "/nonexistent/x.mp4", InputOptions{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// testJPEG makes a 4:2:0 JPEG with the ffmpeg CLI, or skips.
func testJPEG(t testing.TB, size string) []byte {
	t.Helper()
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		testreq.Missing(t, "ffmpeg CLI not on PATH")
	}
	p := filepath.Join(t.TempDir(), "a.jpg")
	out, err := exec.Command("ffmpeg", "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i",
		"testsrc2=size="+size+":duration=0.04", "-frames:v", "1", "-pix_fmt", "yuvj420p", "-q:v", "3", p).CombinedOutput()
	if err != nil {
		t.Fatalf("ffmpeg: %v %s", err, out)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestImageDecoder(t *testing.T) {
	jpg := testJPEG(t, "320x240")
	d, err := NewImageDecoder("mjpeg", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var p Picture
	for _, c := range []struct{ lowres, w, h int }{{0, 320, 240}, {1, 160, 120}, {2, 80, 60}, {0, 320, 240}} {
		if err := d.Decode(jpg, c.lowres, 0, &p); err != nil {
			t.Fatalf("lowres %d: %v", c.lowres, err)
		}
		if p.Width != c.w || p.Height != c.h || p.Log2ChromaW != 1 || p.Log2ChromaH != 1 || !p.FullRange {
			t.Fatalf("lowres %d: %dx%d %s chroma %d/%d full %v", c.lowres, p.Width, p.Height, p.PixFmt, p.Log2ChromaW, p.Log2ChromaH, p.FullRange)
		}
		if len(p.Planes[0]) < p.Strides[0]*p.Height || len(p.Planes[1]) < p.Strides[1]*p.Height/2 {
			t.Fatalf("planes too short: %d %d", len(p.Planes[0]), len(p.Planes[1]))
		}
	}
	if err := d.Decode(jpg, 0, 320*240-1, &p); !errors.Is(err, ErrLimit) {
		t.Errorf("pixel limit: %v", err)
	}
	for name, bad := range map[string][]byte{
		"empty":     nil,
		"garbage":   []byte("\xff\xd8\xff garbage garbage garbage"),
		"truncated": jpg[:len(jpg)/2],
	} {
		if err := d.Decode(bad, 0, 0, &p); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
	// Still usable after errors.
	if err := d.Decode(jpg, 0, 0, &p); err != nil || p.Width != 320 {
		t.Fatalf("after errors: %v %dx%d", err, p.Width, p.Height)
	}
}

// TestImageDecoderTop checks a partial decode returns exactly the top rows of a full one.
func TestImageDecoderTop(t *testing.T) {
	jpg := testJPEG(t, "334x250")
	d, err := NewImageDecoder("mjpeg", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var full, top Picture
	if err := d.Decode(jpg, 0, 0, &full); err != nil {
		t.Fatal(err)
	}
	for _, rows := range []int{1, 15, 16, 17, 100, 234, 240, 249, 250, 0, 1000, 33} {
		if err := d.DecodeTop(jpg, 0, 0, rows, &top); err != nil {
			t.Fatalf("rows %d: %v", rows, err)
		}
		want := (rows + 15) &^ 15
		if rows <= 0 || want >= 250 {
			want = 250
		}
		if top.Width != 334 || top.Height != want {
			t.Fatalf("rows %d: %dx%d, want 334x%d", rows, top.Width, top.Height, want)
		}
		for p, h := range []int{want, (want + 1) / 2, (want + 1) / 2} {
			for y := range h {
				a := full.Planes[p][y*full.Strides[p] : y*full.Strides[p]+full.Strides[p]]
				b := top.Planes[p][y*top.Strides[p] : y*top.Strides[p]+top.Strides[p]]
				w := 334
				if p > 0 {
					w = 167
				}
				if string(a[:w]) != string(b[:w]) {
					t.Fatalf("rows %d: plane %d row %d differs", rows, p, y)
				}
			}
		}
	}
	// A truncated file fails even when the rows asked for are intact.
	if err := d.DecodeTop(jpg[:len(jpg)*3/4], 0, 0, 16, &top); err == nil {
		t.Errorf("truncated: decoded")
	}
}

func FuzzFFmpegDecodeImage(f *testing.F) {
	f.Add(testJPEG(f, "64x48"), 0)
	f.Add([]byte("\xff\xd8\xff\xe0"), 1)
	d, err := NewImageDecoder("mjpeg", 1)
	if err != nil {
		f.Fatal(err)
	}
	defer d.Close()
	f.Fuzz(func(t *testing.T, data []byte, lowres int) {
		var p Picture
		if err := d.Decode(data, lowres&3, 1<<22, &p); err != nil {
			return
		}
		if p.Width <= 0 || p.Height <= 0 || int64(p.Width)*int64(p.Height) > 1<<22 {
			t.Fatalf("bad picture %dx%d", p.Width, p.Height)
		}
	})
}

func rssKB(t testing.TB) int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	var kb int
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			fmt.Sscan(strings.TrimPrefix(l, "VmRSS:"), &kb)
		}
	}
	return kb
}

// TestImageDecoderNoLeak decodes thousands of images (and bad ones) on fresh decoders and
// checks the resident set stays flat after a warm-up.
func TestImageDecoderNoLeak(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	jpg := testJPEG(t, "64x48")
	iter := func(n int) {
		var p Picture
		for i := 0; i < n; i++ {
			d, err := NewImageDecoder("mjpeg", 1)
			if err != nil {
				t.Fatal(err)
			}
			if err := d.Decode(jpg, i%3, 0, &p); err != nil {
				t.Fatal(err)
			}
			_ = d.Decode(jpg[:len(jpg)/2], 0, 0, &p)
			d.Close()
			fc, err := OpenBytes(context.Background(), jpg, InputOptions{})
			if err == nil {
				fc.Close()
			}
		}
	}
	iter(1000)
	runtime.GC()
	before := rssKB(t)
	iter(4000)
	runtime.GC()
	after := rssKB(t)
	t.Logf("RSS %d kB -> %d kB", before, after)
	if after > before+8*1024 {
		t.Fatalf("RSS grew from %d kB to %d kB", before, after)
	}
}
