package fuzzcheck

import "testing"

func TestRecorder(t *testing.T) {
	r := &Recorder{}
	if f := r.Run(func() {}); f != "" {
		t.Fatalf("a passing check recorded %q", f)
	}
	r = &Recorder{}
	reached := false
	if f := r.Run(func() { r.Fatalf("bad %d", 1); reached = true }); f != "bad 1" || reached {
		t.Fatalf("a failing check: recorded %q, went on after Fatalf: %v", f, reached)
	}
	defer func() {
		if p := recover(); p != "other" {
			t.Fatalf("another panic: got %v, want it passed on", p)
		}
	}()
	(&Recorder{}).Run(func() { panic("other") })
}
