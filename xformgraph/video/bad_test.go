package video

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/newtricks/newtricks/xformgraph/ffmpeg"
	"github.com/newtricks/newtricks/xformgraph/internal/testreq"
)

// patchAVC1Size rewrites the coded size in an mp4's avc1 sample entry (the container's
// claim, read before any decoding).
func patchAVC1Size(b []byte, w, h uint16) []byte {
	b = append([]byte(nil), b...)
	// The sample entry, not the ftyp brand: "avc1" followed by 6 reserved zero bytes.
	i := -1
	for j := 0; j+40 < len(b); j++ {
		if string(b[j:j+4]) == "avc1" && string(b[j+4:j+10]) == "\x00\x00\x00\x00\x00\x00" {
			i = j
			break
		}
	}
	if i < 0 {
		return nil
	}
	// avc1 box: type(4) reserved(6) dref(2) pre_defined/reserved(16) width(2) height(2)
	o := i + 4 + 6 + 2 + 16
	b[o], b[o+1], b[o+2], b[o+3] = byte(w>>8), byte(w), byte(h>>8), byte(h)
	return b
}

func TestBadInput(t *testing.T) {
	ctx := context.Background()
	good := readClip(t, "h264_bframes.mp4")
	corrupt := append([]byte(nil), good...)
	for i := len(corrupt) / 10; i < len(corrupt)*6/10; i += 97 {
		corrupt[i] ^= 0x5A
	}
	header := append([]byte(nil), good[:64]...)
	victim := filepath.Join(mediaDir(t), "h264_bframes.mp4") // absolute: no working-directory luck
	cases := []struct {
		name string
		data []byte
		want error // nil: decoding may succeed, but must not crash or hang
	}{
		{"zero-length", nil, ErrEmpty},
		{"garbage", []byte(strings.Repeat("not a video ", 500)), ErrFormat},
		{"header-only", header, ErrFormat},
		{"truncated-half", good[:len(good)/2], ErrFormat}, // moov is at the end: unusable
		{"corrupt", corrupt, nil},
		{"unsupported-codec", readClip(t, "unsupported_ffv1.mkv"), ErrCodec},
		{"audio-only", readClip(t, "audio_only.m4a"), ErrNoVideo},
		// Containers no sample may be in (ffmpeg.DefaultFormats): a WAV, a raw elementary
		// stream, and the demuxers that open further files by name (a concat list, an HLS
		// playlist) pointing at a clip beside the process.
		{"wav", readClip(t, "audio_only.wav"), ffmpeg.ErrFormatRefused},
		{"raw-h264", readClip(t, "raw.h264"), ffmpeg.ErrFormatRefused},
		{"ffconcat", []byte("ffconcat version 1.0\nfile " + victim + "\n"), ffmpeg.ErrFormatRefused},
		{"hls", []byte("#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:10\n#EXTINF:10.0,\n" + victim + "\n#EXT-X-ENDLIST\n"), ffmpeg.ErrFormatRefused},
		{"absurd-dimensions", patchAVC1Size(good, 65000, 65000), ErrTooLarge},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			r, err := OpenBytes(ctx, c.name, c.data, Options{})
			if err == nil {
				_, err = r.Frames(ctx, []int{0, r.Index().NumFrames() / 2, r.Index().NumFrames() - 1}, Output{Width: 32, Height: 32})
				r.Close()
			}
			if c.want == nil {
				t.Logf("%v", err)
				if err != nil && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrFormat) {
					t.Errorf("got %v, want nil, ErrCorrupt or ErrFormat", err)
				}
				return
			}
			var ve *Error
			if !errors.As(err, &ve) || ve.Name != c.name || !errors.Is(err, c.want) {
				t.Fatalf("got %v, want a *video.Error naming %q wrapping %v", err, c.name, c.want)
			}
		})
	}
}

// TestNestedOpensRefused: even with every demuxer allowed, a sample is exactly its own bytes:
// a concat list or an HLS playlist naming a clip beside the process yields an error, never
// that clip's frames (the in-memory input's io_open refuses, and no protocol is whitelisted).
func TestNestedOpensRefused(t *testing.T) {
	// Relative names, as an attacker would write them: ffconcat's "safe" mode refuses
	// absolute paths but not these, resolved against the process's working directory.
	t.Chdir(mediaDir(t))
	const victim = "h264_bframes.mp4"
	for name, data := range map[string]string{
		"ffconcat": "ffconcat version 1.0\nfile " + victim + "\n",
		"hls":      "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:10\n#EXTINF:10.0,\n" + victim + "\n#EXT-X-ENDLIST\n",
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			r, err := OpenBytes(ctx, name, []byte(data), Options{Formats: ffmpeg.AnyFormat})
			if err == nil {
				n := r.Index().NumFrames()
				r.Close()
				t.Fatalf("opened, %d frames: the demuxer read %s", n, victim)
			}
			t.Logf("%v", err)
		})
	}
}

// TestTruncatedFastStart: a faststart mp4 cut in its media data still yields the frames
// before the cut, and asking for a frame past it is ErrFrameRange, not a hang.
func TestTruncatedTail(t *testing.T) {
	ctx := context.Background()
	// matroska has its headers first, so a cut keeps a readable prefix.
	good := readClip(t, "vfr.mkv")
	r, err := OpenBytes(ctx, "cut", good[:len(good)*2/3], Options{})
	if err != nil {
		t.Fatalf("open truncated mkv: %v", err)
	}
	defer r.Close()
	n := r.Index().NumFrames()
	if n == 0 || n >= 70 {
		t.Fatalf("truncated clip has %d frames", n)
	}
	if _, err := r.Frames(ctx, []int{0, n - 1}, Output{}); err != nil {
		t.Logf("last frames of a cut clip: %v", err)
	}
	if _, err := r.Frames(ctx, []int{n}, Output{}); !errors.Is(err, ErrFrameRange) {
		t.Fatalf("frame past the end: %v", err)
	}
}

func TestCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := OpenBytes(ctx, "c", readClip(t, "h264_bframes.mp4"), Options{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
}

func rssKB(t testing.TB) int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			v, _ := strconv.Atoi(strings.Fields(l)[1])
			return v
		}
	}
	t.Skip("no VmRSS")
	return 0
}

// TestNoLeak opens, indexes, samples and closes thousands of tiny clips (and some bad
// ones) and checks that the resident set stays flat after a warm-up.
func TestNoLeak(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	ctx := context.Background()
	tiny := readClip(t, "tiny.mp4")
	bad := tiny[:len(tiny)/2]
	iter := func(n int) {
		for i := 0; i < n; i++ {
			r, err := OpenBytes(ctx, "tiny", tiny, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.Frames(ctx, []int{i % 10, 9, 0}, Output{Width: 32, Height: 24}); err != nil {
				t.Fatal(err)
			}
			r.Close()
			if _, err := OpenBytes(ctx, "bad", bad, Options{}); err == nil {
				t.Fatal("truncated clip opened")
			}
		}
	}
	iter(1000)
	runtime.GC()
	before := rssKB(t)
	start := time.Now()
	const n = 3000
	iter(n)
	runtime.GC()
	after := rssKB(t)
	t.Logf("%d clips in %v, RSS %d kB -> %d kB", n, time.Since(start).Round(time.Millisecond), before, after)
	if after > before+8*1024 {
		t.Fatalf("RSS grew from %d kB to %d kB over %d clips", before, after, n)
	}
}

func FuzzDecodeVideo(f *testing.F) {
	dir := os.Getenv("NEWTRICKS_XFORM_MEDIA")
	if dir == "" {
		dir = filepath.Join("..", "testdata", "media")
	}
	// Small seeds only: the fuzzer minimizes every input that finds new coverage, and
	// minimizing a 100 KB video takes its whole minimize time.
	for _, name := range []string{"tiny.mp4", "tiny_vp9.webm", "tiny_hevc10.mkv", "tiny_mpeg4.mp4"} {
		if b, err := os.ReadFile(filepath.Join(dir, "video", name)); err == nil && len(b) < 16<<10 {
			f.Add(b)
		}
	}
	f.Add([]byte("\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom"))
	f.Add([]byte("\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		r, err := OpenBytes(ctx, "fuzz", data, Options{MaxPixels: 1 << 22, MaxPackets: 1 << 14})
		if err != nil {
			var ve *Error
			if !errors.As(err, &ve) {
				t.Fatalf("untyped error %T %v", err, err)
			}
			return
		}
		defer r.Close()
		n := r.Index().NumFrames()
		frames, err := r.Frames(ctx, []int{0, n / 2, n - 1}, Output{Width: 16, Height: 16})
		if err != nil {
			var ve *Error
			if !errors.As(err, &ve) {
				t.Fatalf("untyped error %T %v", err, err)
			}
			return
		}
		for _, fr := range frames {
			if len(fr.Pix) != 16*16*3 {
				t.Fatalf("frame of %d bytes", len(fr.Pix))
			}
		}
	})
}

// TestConcealedIsError: a few damaged bytes mid-stream make every sample that uses a frame
// FFmpeg decoded from them with concealed errors fail with ErrConcealed, while frames of an
// earlier GOP still decode. Which damage FFmpeg notices is the ffmpeg CLI's own verdict
// (`-v error` prints the decode errors it concealed): damage it does not notice (a few
// bytes of CABAC data that still parse) gives other pixels that no decoder can tell from
// the encoder's, and is not asserted on.
func TestConcealedIsError(t *testing.T) {
	ctx := context.Background()
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		testreq.Missing(t, "ffmpeg CLI not on PATH")
	}
	good := readClip(t, "h264_bframes.mp4")
	detected := 0
	for _, frac := range []float64{0.42, 0.45, 0.5, 0.55, 0.58, 0.6} {
		bad := append([]byte(nil), good...)
		at := int(float64(len(bad)) * frac)
		for i := at; i < at+16; i++ {
			bad[i] ^= 0xA5
		}
		p := filepath.Join(t.TempDir(), "bad.mp4")
		if err := os.WriteFile(p, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		cli, _ := exec.Command("ffmpeg", "-hide_banner", "-nostdin", "-v", "error", "-threads", "1", "-i", p, "-f", "null", "-").CombinedOutput()
		cliSaw := len(bytes.TrimSpace(cli)) > 0
		r, err := OpenBytes(ctx, "damaged", bad, Options{})
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		_, err = r.DecodeAll(ctx, nil)
		t.Logf("damage at %d: ffmpeg CLI reports %q; DecodeAll: %v", at, strings.SplitN(string(cli), "\n", 2)[0], err)
		if cliSaw {
			detected++
			if !errors.Is(err, ErrConcealed) || !errors.Is(err, ErrCorrupt) {
				t.Errorf("damage at %d: DecodeAll: %v, want ErrConcealed", at, err)
			}
			n := r.Index().NumFrames()
			all := make([]int, n)
			for i := range all {
				all[i] = i
			}
			if _, err := r.Frames(ctx, all, Output{Width: 32, Height: 32}); !errors.Is(err, ErrConcealed) {
				t.Errorf("damage at %d: all frames: %v, want ErrConcealed", at, err)
			}
		}
		if _, err := r.Frames(ctx, []int{0, 5}, Output{Width: 32, Height: 32}); err != nil {
			t.Errorf("damage at %d: frames of the first GOP: %v", at, err)
		}
		r.Close()
	}
	if detected < 2 {
		t.Fatalf("the ffmpeg CLI noticed only %d of the damaged variants: the test checks too little", detected)
	}
}
