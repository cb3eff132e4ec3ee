package main

import (
	"runtime"
	"testing"
)

// TestModelStep: the model step computes the matrix product (checked against a plain triple
// loop: the values are multiples of 1/64 small enough that float32 sums are exact in any
// order), on its own C thread, in a cgo call and as Go code, and uses CPU on the thread that
// runs it. It logs the CPU the rest of the process used meanwhile.
func TestModelStep(t *testing.T) {
	const n = 96 // not a multiple of the 64-wide tiles: the edges are covered too
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := gemmInit(n); err != nil {
		t.Fatal(err)
	}
	if err := gemmInit(n + 1); err == nil {
		t.Fatal("gemmInit with a second size: want an error")
	}
	if err := gemmInit(0); err == nil {
		t.Fatal("gemmInit(0): want an error")
	}
	mt, err := startModelThread()
	if err != nil {
		t.Fatal(err)
	}
	g := newGoGEMM(n)
	want := func(i, j int) float32 {
		var s float32
		for k := 0; k < n; k++ {
			s += g.a[i*n+k] * g.b[k*n+j]
		}
		return s
	}
	for _, m := range []struct {
		name string
		step func() float64
		at   func(i, j int) float32
	}{
		{"C thread", func() float64 {
			used, err := mt.step()
			if err != nil {
				t.Fatal(err)
			}
			return used
		}, gemmC},
		{"cgo call", func() float64 { t0 := threadCPU(); modelStep(); return threadCPU() - t0 }, gemmC},
		{"Go", func() float64 { t0 := threadCPU(); g.step(); return threadCPU() - t0 }, func(i, j int) float32 { return g.c[i*n+j] }},
	} {
		p0 := processCPU()
		model := 0.0
		for i := 0; i < 3; i++ {
			model += m.step()
		}
		other := processCPU() - p0 - model
		t.Logf("%s: model %.2f ms for 3 GEMMs of %d, rest of the process %.2f ms", m.name, 1000*model, n, 1000*other)
		if model <= 0 {
			t.Errorf("%s: model step used no CPU on its thread", m.name)
		}
		for _, ij := range [][2]int{{0, 0}, {5, 77}, {63, 64}, {95, 95}, {64, 3}} {
			if got, w := m.at(ij[0], ij[1]), want(ij[0], ij[1]); got != w {
				t.Errorf("%s: C[%d][%d] = %v, want %v", m.name, ij[0], ij[1], got, w)
			}
		}
	}
}

// TestParseWorkers: -baseline-workers takes distinct counts from 1 to 64.
func TestParseWorkers(t *testing.T) {
	if w, err := parseWorkers("1, 2,4"); err != nil || len(w) != 3 || w[0] != 1 || w[1] != 2 || w[2] != 4 {
		t.Errorf("parseWorkers(\"1, 2,4\") = %v, %v", w, err)
	}
	for _, bad := range []string{"", "0", "65", "a", "1,1", "1,,2"} {
		if _, err := parseWorkers(bad); err == nil {
			t.Errorf("parseWorkers(%q): want an error", bad)
		}
	}
}
