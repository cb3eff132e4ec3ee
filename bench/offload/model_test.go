package main

import (
	"runtime"
	"testing"
	"time"
)

// TestModelStep: the synthetic model step uses the requested CPU on the thread that runs it.
// It logs the CPU the rest of the process used meanwhile, for the model on its own C thread,
// in a cgo call and as the old Go loop.
func TestModelStep(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	mt, err := startModelThread()
	if err != nil {
		t.Fatal(err)
	}
	onThread := func(d time.Duration) float64 {
		used, err := mt.step(d)
		if err != nil {
			t.Fatal(err)
		}
		return used
	}
	here := func(f func(time.Duration)) func(time.Duration) float64 {
		return func(d time.Duration) float64 {
			t0 := threadCPU()
			f(d)
			return threadCPU() - t0
		}
	}
	for _, m := range []struct {
		name string
		step func(time.Duration) float64
	}{{"C thread", onThread}, {"cgo call", here(modelStep)}, {"Go loop", here(modelStepGo)}} {
		p0 := processCPU()
		model := 0.0
		for i := 0; i < 5; i++ {
			model += m.step(20 * time.Millisecond)
		}
		other := processCPU() - p0 - model
		t.Logf("%s: model %.1f ms for 5 x 20 ms, rest of the process %.2f ms", m.name, 1000*model, 1000*other)
		if model < 0.100 || model > 0.115 {
			t.Errorf("%s: model used %.1f ms, want 100 ms (+ at most one loop iteration per step)", m.name, 1000*model)
		}
	}
}
