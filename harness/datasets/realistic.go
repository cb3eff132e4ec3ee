package datasets

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// Realistic describes a generated dataset shaped like a real training set (bench-offload,
// issue 24): distinct JPEGs at ImageNet-like sizes and qualities and distinct 5-10 s H.264
// clips at 480p-720p, every sample a WebDataset sample with a label ("cls"), its media, a
// metadata record ("json") and a caption ("txt"). Everything is made locally by the ffmpeg
// CLI from its synthetic sources (fractals, cellular automata, gradients, test patterns) with
// hue, blur and per-frame noise, so that no two samples share pixels and the JPEGs have the
// entropy (and so the sizes and decode cost) of photos, not of flat test patterns.
type Realistic struct {
	// Images and Clips are how many distinct samples of each kind to make (> 0 each).
	Images, Clips int
	// ImagesPerShard and ClipsPerShard are tar shard sizes (defaults 50 and 10).
	ImagesPerShard, ClipsPerShard int
	// Seed picks every size, quality, source and parameter.
	Seed uint64
}

// realisticVersion changes whenever the generator would make other bytes for the same
// parameters, so that a cache built by an older generator is not reused.
const realisticVersion = 2

// maxRealistic bounds a request (a typo must not fill the disk): about 100 KB per image and
// 1-3 MB per clip.
const maxRealistic = 100000

func (r Realistic) withDefaults() Realistic {
	if r.ImagesPerShard == 0 {
		r.ImagesPerShard = 50
	}
	if r.ClipsPerShard == 0 {
		r.ClipsPerShard = 10
	}
	return r
}

func (r Realistic) validate() error {
	switch {
	case r.Images <= 0 || r.Clips <= 0:
		return fmt.Errorf("realistic dataset: want at least one image and one clip, got %d images and %d clips", r.Images, r.Clips)
	case r.Images > maxRealistic || r.Clips > maxRealistic:
		return fmt.Errorf("realistic dataset: %d images and %d clips is more than the %d of each this generator makes", r.Images, r.Clips, maxRealistic)
	case r.ImagesPerShard <= 0 || r.ClipsPerShard <= 0:
		return fmt.Errorf("realistic dataset: shard sizes must be positive (images %d, clips %d)", r.ImagesPerShard, r.ClipsPerShard)
	}
	return nil
}

// Key names the dataset by its parameters and the generator's version: the cache directory's
// name.
func (r Realistic) Key() string {
	r = r.withDefaults()
	s := fmt.Sprintf("v%d-img%d-clip%d-ips%d-cps%d-seed%d", realisticVersion, r.Images, r.Clips, r.ImagesPerShard, r.ClipsPerShard, r.Seed)
	h := sha256.Sum256([]byte(s))
	return s + "-" + hex.EncodeToString(h[:4])
}

// RealisticDirs are the two datasets WriteRealistic made: tar shards of JPEG samples and of
// clip samples.
type RealisticDirs struct {
	Root, Images, Clips string
	// Bytes is the shards' total size.
	Bytes int64
	// Cached says the dataset was found complete in the cache (not generated now).
	Cached bool
}

// WriteRealistic returns the dataset r under cacheRoot/realistic-<Key>, generating it first
// unless a complete copy is there (reruns do not regenerate it). It builds into a temporary
// directory and renames it into place, so an interrupted run leaves no half dataset behind.
// workers ffmpeg processes run at once (at least 1); logf, if set, reports progress.
func WriteRealistic(cacheRoot string, r Realistic, workers int, logf func(format string, args ...any)) (RealisticDirs, error) {
	r = r.withDefaults()
	if err := r.validate(); err != nil {
		return RealisticDirs{}, err
	}
	if cacheRoot == "" {
		return RealisticDirs{}, fmt.Errorf("realistic dataset: no cache directory")
	}
	if logf == nil {
		logf = func(string, ...any) {}
	}
	workers = max(1, workers)
	root := filepath.Join(cacheRoot, "realistic-"+r.Key())
	dirs := RealisticDirs{Root: root, Images: filepath.Join(root, "jpeg"), Clips: filepath.Join(root, "clip")}
	if _, err := os.Stat(filepath.Join(root, "COMPLETE")); err == nil {
		dirs.Cached = true
		dirs.Bytes = dirBytes(root)
		return dirs, nil
	}
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		return dirs, fmt.Errorf("realistic dataset: the ffmpeg CLI makes the media: %w", err)
	}
	if err := os.MkdirAll(cacheRoot, 0o755); err != nil {
		return dirs, err
	}
	tmp, err := os.MkdirTemp(cacheRoot, "realistic-tmp-")
	if err != nil {
		return dirs, err
	}
	defer os.RemoveAll(tmp)
	logf("generating %d JPEGs and %d H.264 clips (ffmpeg CLI, %d at a time) into %s", r.Images, r.Clips, workers, root)
	if err := writeRealisticImages(filepath.Join(tmp, "jpeg"), r, workers, logf); err != nil {
		return dirs, err
	}
	if err := writeRealisticClips(filepath.Join(tmp, "clip"), r, workers, logf); err != nil {
		return dirs, err
	}
	params, _ := json.MarshalIndent(r, "", "  ")
	if err := os.WriteFile(filepath.Join(tmp, "COMPLETE"), append(params, '\n'), 0o644); err != nil {
		return dirs, err
	}
	os.RemoveAll(root) // an incomplete copy (no COMPLETE) from an older attempt
	if err := os.Rename(tmp, root); err != nil {
		return dirs, err
	}
	dirs.Bytes = dirBytes(root)
	return dirs, nil
}

func dirBytes(root string) int64 {
	var n int64
	filepath.Walk(root, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

// imageSizes are ImageNet-like (ILSVRC-2012's photos are mostly about 500 pixels on the long
// side, landscape more often than portrait, a few larger); a size is picked with its weight.
var imageSizes = []struct{ w, h, weight int }{
	{500, 375, 30}, {375, 500, 10}, {500, 333, 14}, {333, 500, 6}, {500, 500, 8},
	{640, 480, 8}, {480, 640, 3}, {500, 400, 6}, {400, 300, 5}, {800, 600, 4},
	{1024, 768, 2}, {300, 225, 4},
}

// clipSizes are 480p to 720p; 720p is a third of the clips.
var clipSizes = []struct{ w, h, weight int }{
	{854, 480, 30}, {640, 480, 20}, {960, 540, 17}, {1280, 720, 33},
}

func pickSize(rng *rand.Rand, sizes []struct{ w, h, weight int }) (int, int) {
	total := 0
	for _, s := range sizes {
		total += s.weight
	}
	x := rng.IntN(total)
	for _, s := range sizes {
		if x < s.weight {
			return s.w, s.h
		}
		x -= s.weight
	}
	return sizes[0].w, sizes[0].h
}

// families are the content sources: a label (the "cls" member) each, a caption's noun, and an
// ffmpeg lavfi source of the given size and rate with parameters from rng.
var families = []struct {
	name string
	src  func(rng *rand.Rand, w, h, rate int) string
}{
	{"mandelbrot zoom", func(rng *rand.Rand, w, h, rate int) string {
		pts := [][2]float64{{-0.743643887037151, 0.13182590420533}, {-0.7453, 0.1127}, {-1.25066, 0.02012}, {-0.16, 1.0405}, {0.285, 0.01}}
		p := pts[rng.IntN(len(pts))]
		return fmt.Sprintf("mandelbrot=size=%dx%d:rate=%d:maxiter=%d:start_x=%g:start_y=%g:start_scale=%g:end_scale=%g:end_pts=%d",
			w, h, rate, 120+rng.IntN(200), p[0], p[1], 1.5+rng.Float64()*2, 0.001+rng.Float64()*0.05, 200+rng.IntN(400))
	}},
	{"game of life", func(rng *rand.Rand, w, h, rate int) string {
		cols := []string{"#c0e0ff", "#ffd080", "#80ff90", "#ff90c0", "#e0e0e0"}
		return fmt.Sprintf("life=size=%dx%d:rate=%d:seed=%d:ratio=%.2f:mold=%d:life_color=%s:death_color=#%06x:mold_color=#%06x,gblur=sigma=%.1f",
			w/2, h/2, rate, rng.IntN(1<<30), 0.1+rng.Float64()*0.5, 5+rng.IntN(40), cols[rng.IntN(len(cols))], rng.IntN(1<<24), rng.IntN(1<<24), 0.5+rng.Float64()*1.5) +
			fmt.Sprintf(",scale=%d:%d", w, h)
	}},
	{"cellular automaton", func(rng *rand.Rand, w, h, rate int) string {
		rules := []int{18, 30, 45, 60, 73, 90, 105, 110, 122, 150, 182}
		return fmt.Sprintf("cellauto=size=%dx%d:rate=%d:rule=%d:seed=%d:random_fill_ratio=%.2f,format=yuv420p,gblur=sigma=%.1f,hue=h=%d:s=%.1f",
			w/2, h/2, rate, rules[rng.IntN(len(rules))], rng.IntN(1<<30), 0.2+rng.Float64()*0.6, 0.8+rng.Float64()*2, rng.IntN(360), 1+rng.Float64()*3) +
			fmt.Sprintf(",scale=%d:%d", w, h)
	}},
	{"colour gradient", func(rng *rand.Rand, w, h, rate int) string {
		return fmt.Sprintf("gradients=size=%dx%d:rate=%d:nb_colors=%d:seed=%d:speed=%.3f",
			w, h, rate, 2+rng.IntN(7), rng.IntN(1<<30), 0.01+rng.Float64()*0.05)
	}},
	{"sierpinski fractal", func(rng *rand.Rand, w, h, rate int) string {
		t := []string{"carpet", "triangle"}[rng.IntN(2)]
		tint := func() float64 { return rng.Float64()*1.6 - 0.8 }
		return fmt.Sprintf("sierpinski=size=%dx%d:rate=%d:seed=%d:jump=%d:type=%s,format=rgb24,colorbalance=rs=%.2f:gs=%.2f:bs=%.2f:rh=%.2f:gh=%.2f:bh=%.2f,gblur=sigma=%.1f",
			w, h, rate, rng.IntN(1<<30), 1+rng.IntN(10), t, tint(), tint(), tint(), tint(), tint(), tint(), 0.5+rng.Float64()*2)
	}},
	{"test pattern", func(rng *rand.Rand, w, h, rate int) string {
		return fmt.Sprintf("testsrc2=size=%dx%d:rate=%d,hue=h=%d:s=%.1f,rotate=%.2f", w, h, rate, rng.IntN(360), 0.5+rng.Float64(), rng.Float64()-0.5)
	}},
}

// captionFor is a sample's caption: a sentence of varying length about what it shows.
func captionFor(rng *rand.Rand, family string, w, h int, extra string) string {
	adj := []string{"bright", "dark", "noisy", "colourful", "soft", "sharp", "busy", "calm", "grainy", "vivid", "faded", "détaillé"}
	words := []string{fmt.Sprintf("a %s %s", adj[rng.IntN(len(adj))], family)}
	for i := rng.IntN(4); i > 0; i-- {
		words = append(words, fmt.Sprintf("with %s %s", adj[rng.IntN(len(adj))], []string{"edges", "patches", "stripes", "dots", "curves", "noise"}[rng.IntN(6)]))
	}
	words = append(words, fmt.Sprintf("(%dx%d%s) — généré", w, h, extra))
	return strings.Join(words, ", ")
}

type realSample struct {
	ext, caption, meta string
	label              int
	data               []byte
}

// writeShards writes samples as tar shards of per samples each under dir, keys s%03d/%06d,
// members in the order cls, media, json, txt (as Write's).
func writeShards(dir string, per int, smp []realSample) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for s := 0; s*per < len(smp); s++ {
		var b bytes.Buffer
		tw := tar.NewWriter(&b)
		for j, x := range smp[s*per : min(len(smp), (s+1)*per)] {
			key := fmt.Sprintf("s%03d/%06d", s, j)
			for _, m := range []struct {
				ext  string
				data []byte
			}{{"cls", []byte(fmt.Sprint(x.label))}, {x.ext, x.data}, {"json", []byte(x.meta)}, {"txt", []byte(x.caption)}} {
				if err := tw.WriteHeader(&tar.Header{Name: key + "." + m.ext, Mode: 0o644, Size: int64(len(m.data)), Typeflag: tar.TypeReg}); err != nil {
					return err
				}
				if _, err := tw.Write(m.data); err != nil {
					return err
				}
			}
		}
		if err := tw.Close(); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("shard-%03d.tar", s)), b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// parallel runs job(0..n-1) with at most workers at once and returns the first error.
func parallel(n, workers int, job func(i int) error) error {
	var (
		mu    sync.Mutex
		first error
		next  int
		wg    sync.WaitGroup
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				stop := first != nil
				mu.Unlock()
				if i >= n || stop {
					return
				}
				if err := job(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

func ffmpeg(args ...string) error {
	cmd := exec.Command("ffmpeg", append([]string{"-hide_banner", "-loglevel", "error", "-nostdin", "-y"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("ffmpeg %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

// imagesPerRun JPEGs come from one ffmpeg run (one source, size and quality): every 5th frame
// of the moving source, each with its own per-frame noise.
const imagesPerRun = 10

func writeRealisticImages(dir string, r Realistic, workers int, logf func(string, ...any)) error {
	scratch, err := os.MkdirTemp("", "realistic-img-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	runs := (r.Images + imagesPerRun - 1) / imagesPerRun
	smp := make([]realSample, r.Images)
	err = parallel(runs, workers, func(g int) error {
		rng := rand.New(rand.NewPCG(r.Seed, uint64(g)))
		w, h := pickSize(rng, imageSizes)
		fam := rng.IntN(len(families))
		q := 2 + rng.IntN(4) // mjpeg qscale 2-5: roughly libjpeg quality 95 down to 80
		n := min(imagesPerRun, r.Images-g*imagesPerRun)
		src := families[fam].src(rng, w, h, 25)
		vf := fmt.Sprintf("noise=alls=%d:allf=t+u,select='not(mod(n\\,5))'", 16+rng.IntN(17))
		out := filepath.Join(scratch, fmt.Sprintf("g%05d-%%02d.jpg", g))
		if err := ffmpeg("-f", "lavfi", "-i", src, "-ss", fmt.Sprint(rng.IntN(8)), "-vf", vf, "-fps_mode", "vfr", "-frames:v", fmt.Sprint(n), "-q:v", fmt.Sprint(q), out); err != nil {
			return err
		}
		for k := 0; k < n; k++ {
			p := filepath.Join(scratch, fmt.Sprintf("g%05d-%02d.jpg", g, k+1))
			data, err := os.ReadFile(p)
			if err != nil {
				return fmt.Errorf("ffmpeg made fewer than %d frames of %s: %w", n, src, err)
			}
			os.Remove(p)
			i := g*imagesPerRun + k
			smp[i] = realSample{ext: "jpg", label: fam, data: data,
				caption: captionFor(rng, families[fam].name, w, h, ""),
				meta:    fmt.Sprintf(`{"family": %q, "width": %d, "height": %d, "qscale": %d, "run": %d, "frame": %d}`, families[fam].name, w, h, q, g, k)}
		}
		if g%20 == 19 {
			logf("  %d of %d JPEGs", min(r.Images, (g+1)*imagesPerRun), r.Images)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return writeShards(dir, r.ImagesPerShard, smp)
}

func writeRealisticClips(dir string, r Realistic, workers int, logf func(string, ...any)) error {
	scratch, err := os.MkdirTemp("", "realistic-clip-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	smp := make([]realSample, r.Clips)
	var mu sync.Mutex
	done := 0
	err = parallel(r.Clips, workers, func(i int) error {
		rng := rand.New(rand.NewPCG(r.Seed^0x5eed, uint64(i)))
		w, h := pickSize(rng, clipSizes)
		fam := rng.IntN(len(families))
		rate := []int{24, 25, 30}[rng.IntN(3)]
		dur := 5 + rng.IntN(6)  // 5-10 s
		crf := 26 + rng.IntN(6) // 1.5-3 MB for 6 s of 720p: the bitrates of web video
		gop := rate * (1 + rng.IntN(4))
		bf := 2 + rng.IntN(2)
		src := families[fam].src(rng, w, h, rate) + fmt.Sprintf(",noise=alls=%d:allf=u", 1+rng.IntN(3))
		p := filepath.Join(scratch, fmt.Sprintf("c%05d.mp4", i))
		if err := ffmpeg("-f", "lavfi", "-i", src, "-t", fmt.Sprint(dur), "-c:v", "libx264", "-preset", "superfast", "-crf", fmt.Sprint(crf),
			"-g", fmt.Sprint(gop), "-bf", fmt.Sprint(bf), "-pix_fmt", "yuv420p", "-movflags", "+faststart", p); err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		os.Remove(p)
		smp[i] = realSample{ext: "mp4", label: len(families) + fam, data: data,
			caption: captionFor(rng, families[fam].name+" video", w, h, fmt.Sprintf(", %d s at %d fps", dur, rate)),
			meta: fmt.Sprintf(`{"family": %q, "width": %d, "height": %d, "fps": %d, "seconds": %d, "crf": %d, "gop": %d, "bframes": %d}`,
				families[fam].name, w, h, rate, dur, crf, gop, bf)}
		mu.Lock()
		done++
		if done%25 == 0 {
			logf("  %d of %d clips", done, r.Clips)
		}
		mu.Unlock()
		return nil
	})
	if err != nil {
		return err
	}
	return writeShards(dir, r.ClipsPerShard, smp)
}

// ShardMedia returns the media members of the first n samples of the tar shards in dir (in
// shard and member order): items to build further datasets from.
func ShardMedia(dir string, n int) ([]Item, error) {
	shards, _ := filepath.Glob(filepath.Join(dir, "shard-*.tar"))
	sort.Strings(shards)
	var out []Item
	for _, s := range shards {
		f, err := os.Open(s)
		if err != nil {
			return nil, err
		}
		tr := tar.NewReader(f)
		for len(out) < n {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				f.Close()
				return nil, fmt.Errorf("%s: %w", s, err)
			}
			ext := strings.TrimPrefix(filepath.Ext(h.Name), ".")
			if ext != "jpg" && ext != "png" && ext != "mp4" {
				continue
			}
			b, err := io.ReadAll(tr)
			if err != nil {
				f.Close()
				return nil, err
			}
			out = append(out, Item{Ext: ext, Data: b})
		}
		f.Close()
		if len(out) >= n {
			return out, nil
		}
	}
	return nil, fmt.Errorf("%s: %d media members, want %d", dir, len(out), n)
}
