package main

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"os"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// series is one line of the timeline: (seconds, bytes) points.
type series struct {
	name  string
	color color.RGBA
	x, y  []float64
}

// plotTimeline writes a PNG line chart (x: seconds, y: MiB) of the series.
func plotTimeline(path, title string, ss []series) error {
	const w, h, left, right, top, bottom = 1000, 560, 70, 20, 40, 50
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), &image.Uniform{color.White}, image.Point{}, draw.Src)
	minX, maxX, maxY := math.Inf(1), math.Inf(-1), 0.0
	for _, s := range ss {
		for i := range s.x {
			minX, maxX = math.Min(minX, s.x[i]), math.Max(maxX, s.x[i])
			maxY = math.Max(maxY, s.y[i]/(1<<20))
		}
	}
	if math.IsInf(minX, 0) || maxX <= minX {
		minX, maxX = 0, 1
	}
	if maxY <= 0 {
		maxY = 1
	}
	maxY *= 1.05
	px := func(x float64) int { return left + int((x-minX)/(maxX-minX)*float64(w-left-right)) }
	py := func(y float64) int { return h - bottom - int(y/maxY*float64(h-top-bottom)) }
	grey := color.RGBA{200, 200, 200, 255}
	black := color.RGBA{0, 0, 0, 255}
	// Grid and ticks.
	for i := 0; i <= 5; i++ {
		y := maxY * float64(i) / 5
		line(img, left, py(y), w-right, py(y), grey)
		text(img, 4, py(y)+4, fmt.Sprintf("%.0f MiB", y), black)
	}
	stepX := niceStep((maxX - minX) / 10)
	for x := math.Ceil(minX/stepX) * stepX; x <= maxX; x += stepX {
		line(img, px(x), top, px(x), h-bottom, grey)
		text(img, px(x)-10, h-bottom+16, fmt.Sprintf("%gs", math.Round(x*10)/10), black)
	}
	if minX < 0 && maxX > 0 {
		line(img, px(0), top, px(0), h-bottom, black) // checkpoint complete on dc-a
		text(img, px(0)+4, top+12, "complete on dc-a", black)
	}
	line(img, left, h-bottom, w-right, h-bottom, black)
	line(img, left, top, left, h-bottom, black)
	text(img, left, 20, title, black)
	for k, s := range ss {
		for i := 1; i < len(s.x); i++ {
			thick(img, px(s.x[i-1]), py(s.y[i-1]/(1<<20)), px(s.x[i]), py(s.y[i]/(1<<20)), s.color)
		}
		ly := top + 30 + 16*k
		thick(img, w-right-430, ly-4, w-right-400, ly-4, s.color)
		text(img, w-right-394, ly, s.name, black)
	}
	text(img, w/2-60, h-10, "seconds from checkpoint complete on dc-a", black)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if raw <= m*mag {
			return m * mag
		}
	}
	return 10 * mag
}

func line(img *image.RGBA, x0, y0, x1, y1 int, c color.Color) {
	dx, dy := abs(x1-x0), -abs(y1-y0)
	sx, sy := 1, 1
	if x0 > x1 {
		sx = -1
	}
	if y0 > y1 {
		sy = -1
	}
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

func thick(img *image.RGBA, x0, y0, x1, y1 int, c color.Color) {
	for d := -1; d <= 1; d++ {
		line(img, x0, y0+d, x1, y1+d, c)
	}
}

func abs(a int) int {
	if a < 0 {
		return -a
	}
	return a
}

func text(img *image.RGBA, x, y int, s string, c color.Color) {
	d := &font.Drawer{Dst: img, Src: image.NewUniform(c), Face: basicfont.Face7x13, Dot: fixed.P(x, y)}
	d.DrawString(s)
}
