package video

import (
	"bytes"
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/newtricks/newtricks/xformgraph/internal/testreq"
)

// decordFrames runs testdata/decord_ref.py: decord's RGB24 frames idx of clip, w x h
// (0 x 0: native size, of which nw x nh is the delivered size).
func decordFrames(t testing.TB, clip string, w, h, nw, nh int, idx []int) [][]byte {
	t.Helper()
	py := os.Getenv("NEWTRICKS_PYTHON")
	if py == "" {
		testreq.Missing(t, "NEWTRICKS_PYTHON not set: run `make xform-pyenv` and export NEWTRICKS_PYTHON=$HOME/.cache/newtricks/venv-test/bin/python")
	}
	if err := exec.Command(py, "-c", "import decord").Run(); err != nil {
		testreq.Missing(t, "decord not importable by %s (make xform-pyenv installs it): %v", py, err)
	}
	args := []string{"testdata/decord_ref.py", clip, strconv.Itoa(w), strconv.Itoa(h)}
	for _, i := range idx {
		args = append(args, strconv.Itoa(i))
	}
	var out, stderr bytes.Buffer
	cmd := exec.Command(py, args...)
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("decord_ref.py %v: %v\n%s", args, err, stderr.String())
	}
	if w == 0 {
		w, h = nw, nh
	}
	f := splitFrames(t, "decord", out.Bytes(), w, h)
	if len(f) != len(idx) {
		t.Fatalf("decord gave %d frames for %d indices (%s)", len(f), len(idx), strings.TrimSpace(stderr.String()))
	}
	return f
}

// TestFramesMatchDecord compares newtricks' frames with decord's (the decord wheel of the
// test venv, with the FFmpeg 4.1 libraries it bundles) for the same indices, each side with
// its defaults (bilinear): equal bit for bit at native size; resized, within resizePSNR.
// decord cannot open the raw H.264 stream ("broken metadata"), and it numbers the frames of
// the AVI without timestamps otherwise; those two are left out.
func TestFramesMatchDecord(t *testing.T) {
	dir := mediaDir(t)
	ctx := context.Background()
	for _, c := range clips {
		if c.name == "raw.h264" || c.name == "mpeg4_bframes.avi" {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, c.name)
			r, err := OpenBytes(ctx, c.name, readClip(t, c.name), clipOptions(c.name))
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			idx := sampleIndices(r.Index().NumFrames())
			got, err := r.Frames(ctx, idx, Output{})
			if err != nil {
				t.Fatal(err)
			}
			ref := decordFrames(t, path, 0, 0, c.w, c.h, idx)
			for k, f := range got {
				if !bytes.Equal(f.Pix, ref[k]) {
					t.Errorf("native frame %d differs from decord's: PSNR %.1f dB", f.Index, psnr(f.Pix, ref[k]))
				}
			}
			for _, sz := range [][2]int{{64, 48}, {224, 224}} {
				got, err := r.Frames(ctx, idx, Output{Width: sz[0], Height: sz[1]})
				if err != nil {
					t.Fatal(err)
				}
				ref := decordFrames(t, path, sz[0], sz[1], 0, 0, idx)
				same, worst := 0, math.Inf(1)
				for k, f := range got {
					p := psnr(f.Pix, ref[k])
					if p < resizePSNR {
						t.Errorf("%dx%d frame %d: PSNR %.1f dB < %.0f against decord", sz[0], sz[1], f.Index, p, resizePSNR)
					}
					if math.IsInf(p, 1) {
						same++
					}
					worst = min(worst, p)
				}
				t.Logf("resized %dx%d vs decord: %d/%d identical, min PSNR %.1f dB", sz[0], sz[1], same, len(got), worst)
			}
		})
	}
}
