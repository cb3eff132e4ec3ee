package main

import (
	"runtime"
	"testing"
	"time"
)

// TestModelStep: the synthetic model step uses the requested CPU on the calling thread. It
// logs the CPU the rest of the process used meanwhile, for the C step and the old Go loop.
func TestModelStep(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for _, m := range []struct {
		name string
		step func(time.Duration)
	}{{"C", modelStep}, {"Go loop", modelStepGo}} {
		p0, t0 := processCPU(), threadCPU()
		for i := 0; i < 5; i++ {
			m.step(20 * time.Millisecond)
		}
		model := threadCPU() - t0
		other := processCPU() - p0 - model
		t.Logf("%s: model thread %.1f ms for 5 x 20 ms, rest of the process %.2f ms", m.name, 1000*model, 1000*other)
		if model < 0.100 || model > 0.115 {
			t.Errorf("%s: model thread used %.1f ms, want 100 ms (+ at most one loop iteration per step)", m.name, 1000*model)
		}
	}
}
