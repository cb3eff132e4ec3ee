package main

import (
	"fmt"
	"slices"
	"time"

	"github.com/newtricks/newtricks/bench/internal/plot"
)

// medianStorm returns the storm whose barrier is the median of rs (the lower middle one of an
// even count), so that the plot shows a typical storm of the case, not its best.
func medianStorm(rs []result) result {
	if len(rs) == 0 {
		return result{}
	}
	s := slices.Clone(rs)
	slices.SortFunc(s, func(a, b result) int { return int(a.barrier - b.barrier) })
	return s[(len(s)-1)/2]
}

// finishedSeries is a step curve of how many readers had finished by each time since the
// storm's start: (0, 0), then one step up at every reader's finish.
func finishedSeries(name string, took []time.Duration) plot.Series {
	t := slices.Clone(took)
	slices.Sort(t)
	s := plot.Series{Name: name, X: []float64{0}, Y: []float64{0}}
	for i, d := range t {
		x := d.Seconds()
		s.X = append(s.X, x, x)
		s.Y = append(s.Y, float64(i), float64(i+1))
	}
	return s
}

// writeStormPlot draws, for every case, the readers finished over time in its median storm,
// titled what, with marks (the physical limit, a kill) on the time axis.
func writeStormPlot(path, what string, cases []string, storms map[string][]result, marks []plot.Mark) error {
	var ss []plot.Series
	for i, cs := range cases {
		m := medianStorm(storms[cs])
		if len(m.took) == 0 {
			return fmt.Errorf("plot: no storm of %s", cs)
		}
		s := finishedSeries(fmt.Sprintf("%s (barrier %.1f s)", cs, m.barrier.Seconds()), m.took)
		s.Color = plot.Palette[i%len(plot.Palette)]
		ss = append(ss, s)
	}
	c := plot.Chart{Title: what + ": readers finished, each case's median storm",
		XLabel: "seconds since the storm's start", YLabel: "readers finished", XUnit: " s", Thick: true, Marks: marks}
	return c.WritePNG(path, ss)
}
