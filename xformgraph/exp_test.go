package xformgraph

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestExpPortable checks the copy against math.Exp (both within 1 ulp of the truth), over the
// range random_resized_crop uses and beyond, and the special cases exactly.
func TestExpPortable(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 200000; i++ {
		x := (r.Float64()*2 - 1) * 20
		if i%2 == 0 {
			x = (r.Float64()*2 - 1) * 0.3 // log(3/4)..log(4/3) and a little more
		}
		got, want := expPortable(x), math.Exp(x)
		if d := math.Abs(got-want) / want; d > 4.5e-16 { // both within 1 ulp of e**x
			t.Fatalf("exp(%v) = %v, math.Exp %v (rel %g)", x, got, want, d)
		}
	}
	for _, x := range []float64{0, 1e-300, -1e-300, 710, -746, math.Inf(1), math.Inf(-1)} {
		if got, want := expPortable(x), math.Exp(x); got != want {
			t.Errorf("exp(%v) = %v, want %v", x, got, want)
		}
	}
	if !math.IsNaN(expPortable(math.NaN())) {
		t.Error("exp(NaN) is not NaN")
	}
}
