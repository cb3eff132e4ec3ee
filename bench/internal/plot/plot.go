// Package plot draws the benchmarks' line charts as PNG files: a title, a grid with labelled
// ticks, one line per series and a legend. It is deliberately small (the standard library's
// image packages and a bitmap font), so a benchmark's picture needs no plotting dependency.
package plot

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

// Series is one line: points (X[i], Y[i]) in drawing order.
type Series struct {
	Name  string
	Color color.RGBA
	X, Y  []float64
}

// Mark is a labelled vertical line at X (an event on the time axis).
type Mark struct {
	X     float64
	Label string
}

// Chart describes the axes and size; zero sizes mean 1000 x 480.
type Chart struct {
	Title          string
	XLabel, YLabel string
	// XUnit and YUnit are appended to tick labels ("s", " MiB", " ms").
	XUnit, YUnit  string
	Width, Height int
	// Thick draws every series three pixels wide.
	Thick bool
	// Points marks every point with a small square (a series of one point shows only so).
	Points bool
	// IntegerX keeps the x ticks on whole numbers (rounds, repetitions).
	IntegerX bool
	Marks    []Mark
}

// Palette has distinct colours for up to six series.
var Palette = []color.RGBA{
	{200, 40, 40, 255}, {30, 110, 200, 255}, {20, 150, 60, 255},
	{150, 60, 180, 255}, {230, 140, 0, 255}, {90, 90, 90, 255},
}

var (
	grey  = color.RGBA{200, 200, 200, 255}
	black = color.RGBA{0, 0, 0, 255}
)

// WritePNG draws the series on c's axes into a PNG file at path.
func (c Chart) WritePNG(path string, ss []Series) error {
	w, h := c.Width, c.Height
	if w == 0 || h == 0 {
		w, h = 1000, 480
	}
	const left, right, top, bottom = 80, 20, 40, 50
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	minX, maxX, maxY := math.Inf(1), math.Inf(-1), 0.0
	for _, s := range ss {
		if len(s.X) != len(s.Y) {
			return fmt.Errorf("plot %s: series %q has %d x and %d y values", path, s.Name, len(s.X), len(s.Y))
		}
		for i := range s.X {
			minX, maxX = math.Min(minX, s.X[i]), math.Max(maxX, s.X[i])
			maxY = math.Max(maxY, s.Y[i])
		}
	}
	switch {
	case math.IsInf(minX, 0):
		minX, maxX = 0, 1
	case maxX <= minX: // one x for every point: centre it
		minX, maxX = minX-0.5, maxX+0.5
	}
	if maxY <= 0 {
		maxY = 1
	}
	maxY *= 1.05
	px := func(x float64) int { return left + int((x-minX)/(maxX-minX)*float64(w-left-right)) }
	py := func(y float64) int { return h - bottom - int(y/maxY*float64(h-top-bottom)) }

	stepY := NiceStep(maxY / 5)
	for y := 0.0; y <= maxY; y += stepY {
		Line(img, left, py(y), w-right, py(y), grey)
		Text(img, 4, py(y)+4, fmt.Sprintf("%g%s", roundTo(y, stepY), c.YUnit), black)
	}
	stepX := NiceStep((maxX - minX) / 10)
	if c.IntegerX && stepX < 1 {
		stepX = 1
	}
	for x := math.Ceil(minX/stepX) * stepX; x <= maxX+stepX*1e-9; x += stepX {
		Line(img, px(x), top, px(x), h-bottom, grey)
		Text(img, px(x)-10, h-bottom+16, fmt.Sprintf("%g%s", roundTo(x, stepX), c.XUnit), black)
	}
	for _, m := range c.Marks {
		if m.X >= minX && m.X <= maxX {
			Line(img, px(m.X), top, px(m.X), h-bottom, black)
			Text(img, px(m.X)+4, top+12, m.Label, black)
		}
	}
	Line(img, left, h-bottom, w-right, h-bottom, black)
	Line(img, left, top, left, h-bottom, black)
	Text(img, left, 20, c.Title, black)
	if c.YLabel != "" {
		Text(img, 4, top-8, c.YLabel, black)
	}
	if c.XLabel != "" {
		Text(img, w/2-len(c.XLabel)*7/2, h-10, c.XLabel, black)
	}
	for k, s := range ss {
		seg := Line
		if c.Thick {
			seg = thick
		}
		for i := 1; i < len(s.X); i++ {
			seg(img, px(s.X[i-1]), py(s.Y[i-1]), px(s.X[i]), py(s.Y[i]), s.Color)
		}
		if c.Points {
			for i := range s.X {
				x, y := px(s.X[i]), py(s.Y[i])
				draw.Draw(img, image.Rect(x-2, y-2, x+3, y+3), image.NewUniform(s.Color), image.Point{}, draw.Src)
			}
		}
		ly := top + 30 + 16*k
		thick(img, w-right-430, ly-4, w-right-400, ly-4, s.Color)
		Text(img, w-right-394, ly, s.Name, black)
	}
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

// NiceStep rounds a raw tick step up to 1, 2 or 5 times a power of ten.
func NiceStep(raw float64) float64 {
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

// roundTo drops the float noise of repeated additions of step from a tick value.
func roundTo(v, step float64) float64 {
	digits := math.Max(0, -math.Floor(math.Log10(step))+1)
	p := math.Pow(10, digits)
	return math.Round(v*p) / p
}

// Line draws a one-pixel line (Bresenham).
func Line(img *image.RGBA, x0, y0, x1, y1 int, c color.Color) {
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
		Line(img, x0, y0+d, x1, y1+d, c)
	}
}

func abs(a int) int {
	if a < 0 {
		return -a
	}
	return a
}

// Text draws s with its baseline at (x, y) in a 7x13 bitmap font.
func Text(img *image.RGBA, x, y int, s string, c color.Color) {
	d := &font.Drawer{Dst: img, Src: image.NewUniform(c), Face: basicfont.Face7x13, Dot: fixed.P(x, y)}
	d.DrawString(s)
}
