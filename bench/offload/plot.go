package main

import (
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"time"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// plotWaits writes a PNG of per-step durations (stall), one line per series.
func plotWaits(path, title string, names []string, series [][]time.Duration, colors []color.RGBA) error {
	const W, H, L, R, T, B = 1000, 420, 70, 20, 40, 50
	img := image.NewRGBA(image.Rect(0, 0, W, H))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	maxY, maxX := time.Millisecond, 1
	for _, s := range series {
		maxX = max(maxX, len(s))
		for _, v := range s {
			maxY = max(maxY, v)
		}
	}
	grey := color.RGBA{200, 200, 200, 255}
	black := color.RGBA{0, 0, 0, 255}
	text := func(x, y int, s string, c color.Color) {
		d := font.Drawer{Dst: img, Src: image.NewUniform(c), Face: basicfont.Face7x13, Dot: fixed.P(x, y)}
		d.DrawString(s)
	}
	px := func(i int) int { return L + i*(W-L-R)/max(1, maxX-1) }
	py := func(v time.Duration) int { return H - B - int(float64(v)/float64(maxY)*float64(H-T-B)) }
	for k := 0; k <= 4; k++ {
		v := maxY * time.Duration(k) / 4
		y := py(v)
		line(img, L, y, W-R, y, grey)
		text(4, y+4, v.Round(time.Millisecond).String(), black)
	}
	line(img, L, H-B, W-R, H-B, black)
	line(img, L, T, L, H-B, black)
	text(L, H-B+30, "step", black)
	text(L, 20, title, black)
	for si, s := range series {
		for i := 1; i < len(s); i++ {
			line(img, px(i-1), py(s[i-1]), px(i), py(s[i]), colors[si])
		}
		text(W-R-260, T+16*(si+1), names[si], colors[si])
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return png.Encode(f, img)
}

func line(img *image.RGBA, x0, y0, x1, y1 int, c color.Color) {
	dx, dy := abs(x1-x0), -abs(y1-y0)
	sx, sy := sign(x1-x0), sign(y1-y0)
	err := dx + dy
	for {
		img.Set(x0, y0, c)
		if x0 == x1 && y0 == y1 {
			return
		}
		e2 := 2 * err
		if e2 >= dy {
			err += dy
			x0 += sx
		}
		if e2 <= dx {
			err += dx
			y0 += sy
		}
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func sign(x int) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}
