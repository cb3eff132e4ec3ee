// Package datasets writes small real-media datasets (WebDataset tar shards and one file per
// sample) for tests, benchmarks and the demo.
package datasets

import (
	"archive/tar"
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// Media are encoded samples to build datasets from.
type Media struct {
	// Images are JPEG or PNG files; Videos are short clips (MP4).
	Images, Videos []Item
}

// Item is one encoded file.
type Item struct {
	Ext  string // "jpg", "png", "mp4"
	Data []byte
}

// LoadMedia reads the xformgraph test media (`make xform-media`, directory in
// NEWTRICKS_XFORM_MEDIA: images/*.jpg|png, video/*.mp4 of H.264). Without that directory it
// synthesizes media: JPEGs and PNGs encoded by Go, clips encoded by the ffmpeg CLI (an error
// if the CLI is missing: no silent shortcut).
func LoadMedia(mediaDir string) (Media, error) {
	if mediaDir != "" {
		var m Media
		imgs, _ := filepath.Glob(filepath.Join(mediaDir, "images", "*.jpg"))
		sort.Strings(imgs)
		for _, p := range imgs {
			if strings.Contains(p, "cmyk") || strings.Contains(p, "large") || strings.Contains(p, "corrupt") || strings.Contains(p, "trunc") {
				continue
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return m, err
			}
			m.Images = append(m.Images, Item{Ext: "jpg", Data: b})
		}
		for _, name := range []string{"tiny.mp4", "h264_bframes.mp4"} {
			b, err := os.ReadFile(filepath.Join(mediaDir, "video", name))
			if err != nil {
				return m, fmt.Errorf("test media: %w (run make xform-media)", err)
			}
			m.Videos = append(m.Videos, Item{Ext: "mp4", Data: b})
		}
		if len(m.Images) == 0 {
			return m, fmt.Errorf("test media: no images under %s (run make xform-media)", mediaDir)
		}
		return m, nil
	}
	return Synthesize()
}

// Synthesize encodes a few images with Go and two clips with the ffmpeg CLI.
func Synthesize() (Media, error) {
	var m Media
	for i, sz := range [][2]int{{96, 64}, {64, 80}, {120, 90}, {33, 47}} {
		img := image.NewRGBA(image.Rect(0, 0, sz[0], sz[1]))
		for y := 0; y < sz[1]; y++ {
			for x := 0; x < sz[0]; x++ {
				img.Set(x, y, color.RGBA{uint8(x * 7 * (i + 1)), uint8(y * 5), uint8((x + y) * 3), 255})
			}
		}
		var b bytes.Buffer
		if i%2 == 0 {
			if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 90}); err != nil {
				return m, err
			}
			m.Images = append(m.Images, Item{Ext: "jpg", Data: b.Bytes()})
		} else {
			if err := png.Encode(&b, img); err != nil {
				return m, err
			}
			m.Images = append(m.Images, Item{Ext: "png", Data: b.Bytes()})
		}
	}
	dir, err := os.MkdirTemp("", "datasets-")
	if err != nil {
		return m, err
	}
	defer os.RemoveAll(dir)
	for i, spec := range []string{"testsrc2=size=64x48:rate=25:duration=0.4", "testsrc=size=96x64:rate=25:duration=0.6"} {
		out := filepath.Join(dir, fmt.Sprintf("c%d.mp4", i))
		cmd := exec.Command("ffmpeg", "-hide_banner", "-loglevel", "error", "-nostdin", "-y", "-f", "lavfi", "-i", spec,
			"-c:v", "libx264", "-preset", "ultrafast", "-bf", "2", "-g", "5", "-pix_fmt", "yuv420p", out)
		if b, err := cmd.CombinedOutput(); err != nil {
			return m, fmt.Errorf("ffmpeg CLI (needed to make test clips): %v: %s", err, b)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			return m, err
		}
		m.Videos = append(m.Videos, Item{Ext: "mp4", Data: b})
	}
	return m, nil
}

// Layout says what Write produces.
type Layout struct {
	// Shards of PerShard samples each ("shard-%03d.tar"), and Singles one-file samples under
	// "single/". Every VideoEvery-th sample is a clip (0: images only).
	Shards, PerShard, Singles, VideoEvery int
	// Corrupt names keys whose bytes are replaced by garbage (a corrupt sample).
	Corrupt map[string]bool
	// Captions adds a caption ("txt", Caption) and metadata ("json", Meta) member to every
	// tar sample, beside its label ("cls", Label), which every tar sample has.
	Captions bool
}

// Label is the "cls" member Write gives the j-th sample of a shard.
func Label(j int) int { return j % 10 }

// Caption is the "txt" member Write gives a sample (UTF-8, not ASCII only).
func Caption(key string, j int) string {
	return fmt.Sprintf("a photo of sample %s, class %d \u2014 caf\u00e9", key, Label(j))
}

// Meta is the "json" member Write gives a sample.
func Meta(key string, shard, j int, ext string) string {
	return fmt.Sprintf(`{"key": %q, "shard": %d, "index": %d, "media": %q, "tags": ["a", "b"], "score": 0.5}`, key, shard, j, ext)
}

// Write creates the dataset in the local directory dir and returns the keys in index order.
func Write(dir string, m Media, l Layout) ([]string, error) {
	if err := os.MkdirAll(filepath.Join(dir, "single"), 0o755); err != nil {
		return nil, err
	}
	n := 0
	pick := func() Item {
		defer func() { n++ }()
		if l.VideoEvery > 0 && len(m.Videos) > 0 && n%l.VideoEvery == l.VideoEvery-1 {
			return m.Videos[(n/l.VideoEvery)%len(m.Videos)]
		}
		return m.Images[n%len(m.Images)]
	}
	var keys []string
	for s := 0; s < l.Shards; s++ {
		var b bytes.Buffer
		tw := tar.NewWriter(&b)
		for j := 0; j < l.PerShard; j++ {
			it := pick()
			key := fmt.Sprintf("s%03d/%06d", s, j)
			data := it.Data
			if l.Corrupt[key] {
				data = bytes.Repeat([]byte{0xff, 0xd8, 0x13}, 200)
			}
			mems := []struct {
				name string
				data []byte
			}{{key + ".cls", []byte(fmt.Sprint(Label(j)))}, {key + "." + it.Ext, data}}
			if l.Captions {
				mems = append(mems, struct {
					name string
					data []byte
				}{key + ".json", []byte(Meta(key, s, j, it.Ext))}, struct {
					name string
					data []byte
				}{key + ".txt", []byte(Caption(key, j))})
			}
			for _, mem := range mems {
				if err := tw.WriteHeader(&tar.Header{Name: mem.name, Mode: 0o644, Size: int64(len(mem.data)), Typeflag: tar.TypeReg}); err != nil {
					return nil, err
				}
				if _, err := tw.Write(mem.data); err != nil {
					return nil, err
				}
			}
			keys = append(keys, key)
		}
		if err := tw.Close(); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("shard-%03d.tar", s)), b.Bytes(), 0o644); err != nil {
			return nil, err
		}
	}
	for j := 0; j < l.Singles; j++ {
		it := pick()
		key := fmt.Sprintf("single/%06d", j)
		if err := os.WriteFile(filepath.Join(dir, key+"."+it.Ext), it.Data, 0o644); err != nil {
			return nil, err
		}
		keys = append(keys, key)
	}
	return keys, nil
}
