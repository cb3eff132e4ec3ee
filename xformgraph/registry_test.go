package xformgraph

import (
	"context"
	"errors"
	"testing"
)

func TestSeedForStable(t *testing.T) {
	a1, a2 := SeedFor(1, "k", 0, "n")
	b1, b2 := SeedFor(1, "k", 0, "n")
	if a1 != b1 || a2 != b2 {
		t.Fatal("SeedFor not deterministic")
	}
	// Length prefixes: ("ab","c") and ("a","bc") must differ.
	c1, _ := SeedFor(1, "ab", 0, "c")
	d1, _ := SeedFor(1, "a", 0, "bc")
	if c1 == d1 {
		t.Fatal("ambiguous seed derivation")
	}
	e1, _ := SeedFor(1, "k", 1, "n")
	if e1 == a1 {
		t.Fatal("epoch ignored")
	}
}

func TestRegistryParams(t *testing.T) {
	r := NewRegistry()
	noop := func(ctx context.Context, env *Env, in Value) (Value, error) { return in, nil }
	r.MustRegister(OpDef{Name: "x", In: []Kind{KindImage}, Out: KindSame, Run: noop, Params: []ParamSpec{
		{Name: "size", Type: ParamInt, Min: 1, Max: 100, Required: true},
		{Name: "mode", Type: ParamString, Enum: []string{"a", "b"}, Default: "a"},
		{Name: "mean", Type: ParamFloats, MinLen: 1, MaxLen: 4},
	}})
	if err := r.Register(OpDef{Name: "x", In: []Kind{KindImage}, Out: KindSame, Run: noop}); err == nil {
		t.Fatal("duplicate accepted")
	}
	def, _ := r.Lookup("x")
	for _, tc := range []struct {
		raw  map[string]any
		fail bool
	}{
		{map[string]any{"size": 5.0}, false},
		{map[string]any{"size": 5.5}, true},
		{map[string]any{"size": 500.0}, true},
		{map[string]any{}, true},
		{map[string]any{"size": 5.0, "mode": "c"}, true},
		{map[string]any{"size": 5.0, "bogus": 1.0}, true},
		{map[string]any{"size": 5.0, "mean": []any{1.0, 2.0}}, false},
		{map[string]any{"size": 5.0, "mean": []any{}}, true},
	} {
		p, err := checkParams(def.Params, tc.raw)
		if (err != nil) != tc.fail {
			t.Errorf("%v: err=%v", tc.raw, err)
		}
		if err != nil && !errors.Is(err, ErrBadParam) {
			t.Errorf("%v: not ErrBadParam: %v", tc.raw, err)
		}
		if err == nil && p.String("mode") != "a" && tc.raw["mode"] == nil {
			t.Errorf("default not filled")
		}
	}
}

func TestFloat16(t *testing.T) {
	for _, f := range []float32{0, 1, -2.5, 65504, 1e-7, 0.1, -0.333} {
		h := Float32ToFloat16(f)
		g := Float16ToFloat32(h)
		if d := g - f; d > 0.001*abs32(f)+6e-8 || d < -0.001*abs32(f)-6e-8 {
			t.Errorf("%v -> %#x -> %v", f, h, g)
		}
	}
	if Float32ToFloat16(1e6) != 0x7c00 {
		t.Error("overflow not inf")
	}
	if Float32ToBFloat16(1) != 0x3f80 {
		t.Error("bf16(1)")
	}
}

func abs32(f float32) float32 {
	if f < 0 {
		return -f
	}
	return f
}
