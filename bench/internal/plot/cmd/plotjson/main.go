// Command plotjson draws a chart from JSON on standard input with bench/internal/plot, for the
// benchmarks written in shell and Python (bench-xform, bench-python), so that every benchmark's
// picture comes from the same code:
//
//	{"title": "...", "xlabel": "...", "ylabel": "...", "xunit": "", "yunit": "", "integer_x": true,
//	 "series": [{"name": "...", "x": [1, 2], "y": [3.5, 4.1]}, ...]}
//
// Usage: plotjson -png out.png < chart.json. Series take plot.Palette's colours in order.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/newtricks/newtricks/bench/internal/plot"
)

type chart struct {
	Title  string `json:"title"`
	XLabel string `json:"xlabel"`
	YLabel string `json:"ylabel"`
	XUnit  string `json:"xunit"`
	YUnit  string `json:"yunit"`
	// IntegerX keeps x ticks on whole numbers (runs, repetitions, steps).
	IntegerX bool `json:"integer_x"`
	Series   []struct {
		Name string    `json:"name"`
		X    []float64 `json:"x"`
		Y    []float64 `json:"y"`
	} `json:"series"`
}

// maxInput bounds what is read: a chart is a few kilobytes.
const maxInput = 16 << 20

func draw(in io.Reader, out string) error {
	b, err := io.ReadAll(io.LimitReader(in, maxInput+1))
	if err != nil {
		return err
	}
	if len(b) > maxInput {
		return fmt.Errorf("input over %d bytes", maxInput)
	}
	var c chart
	if err := json.Unmarshal(b, &c); err != nil {
		return fmt.Errorf("chart JSON: %w", err)
	}
	if len(c.Series) == 0 {
		return fmt.Errorf("chart %q has no series", c.Title)
	}
	var ss []plot.Series
	for i, s := range c.Series {
		if len(s.X) == 0 || len(s.X) != len(s.Y) {
			return fmt.Errorf("series %q: %d x and %d y values", s.Name, len(s.X), len(s.Y))
		}
		ss = append(ss, plot.Series{Name: s.Name, Color: plot.Palette[i%len(plot.Palette)], X: s.X, Y: s.Y})
	}
	pc := plot.Chart{Title: c.Title, XLabel: c.XLabel, YLabel: c.YLabel, XUnit: c.XUnit, YUnit: c.YUnit, Thick: true, Points: true, IntegerX: c.IntegerX}
	return pc.WritePNG(out, ss)
}

func main() {
	out := flag.String("png", "", "PNG file to write")
	flag.Parse()
	if *out == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: plotjson -png out.png < chart.json")
		os.Exit(2)
	}
	if err := draw(os.Stdin, *out); err != nil {
		fmt.Fprintf(os.Stderr, "plotjson: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("plot: %s\n", *out)
}
