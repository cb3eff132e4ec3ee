package main

import (
	"fmt"

	"github.com/newtricks/newtricks/bench/internal/plot"
)

// writePlots draws op's rounds (the clients workload's, normally) into two PNGs beside prefix:
// <prefix>-hooks.png, the hooks' own CPU per op of every hooked configuration round by round,
// and <prefix>-ratio.png, every configuration's ops/s ratio to plain in the same round
// (control's line is what noise alone gives). It returns the files written.
func writePlots(prefix, op string, res map[string]map[string][]sample, names []string) ([]string, error) {
	plain := res["plain"][op]
	if len(plain) == 0 {
		return nil, fmt.Errorf("plot: no plain rounds of %s", op)
	}
	var hooks, ratio []plot.Series
	for i, name := range names {
		if name == "plain" {
			continue
		}
		rs := res[name][op]
		c := plot.Palette[i%len(plot.Palette)]
		h := plot.Series{Name: name, Color: c}
		for r, s := range rs {
			h.X = append(h.X, float64(r+1))
			h.Y = append(h.Y, s.hooksUs)
		}
		if !isPlain(name) {
			hooks = append(hooks, h)
		}
		rr, _ := paired(rs, plain)
		q := plot.Series{Name: name + " / plain", Color: c}
		for r, v := range rr {
			q.X = append(q.X, float64(r+1))
			q.Y = append(q.Y, v)
		}
		ratio = append(ratio, q)
	}
	var out []string
	if len(hooks) > 0 {
		p := prefix + "-hooks.png"
		c := plot.Chart{Title: fmt.Sprintf("%s: the hooks' own CPU per op (NameNode JVM's newtricks threads + namenode-ext), each round", op),
			XLabel: "round", YLabel: "us per op", YUnit: " us", Thick: true, Points: true, IntegerX: true}
		if err := c.WritePNG(p, hooks); err != nil {
			return out, err
		}
		out = append(out, p)
	}
	if len(ratio) > 0 {
		p := prefix + "-ratio.png"
		c := plot.Chart{Title: fmt.Sprintf("%s: ops/s ratio to plain in the same round (control: two identical clusters)", op),
			XLabel: "round", YLabel: "ratio", Thick: true, Points: true, IntegerX: true}
		if err := c.WritePNG(p, ratio); err != nil {
			return out, err
		}
		out = append(out, p)
	}
	return out, nil
}
