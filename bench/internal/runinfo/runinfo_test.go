package runinfo

import (
	"strings"
	"testing"
)

func TestParseLoad(t *testing.T) {
	for in, want := range map[string]string{
		"7.92 4.02 1.76 16/242 30674\n": "7.92/4.02/1.76",
		"0.00 0.01":                     "unknown",
		"":                              "unknown",
	} {
		if got := parseLoad(in); got != want {
			t.Errorf("parseLoad(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFields(t *testing.T) {
	r := &Run{Commit: "abc1234", Dirty: true, LoadStart: "1.00/2.00/3.00"}
	f := r.Fields()
	for _, want := range []string{"commit=abc1234 ", "dirty=true ", "load_start=1.00/2.00/3.00 ", "load_end="} {
		if !strings.Contains(f, want) {
			t.Errorf("Fields() = %q, missing %q", f, want)
		}
	}
	if strings.Count(f, " ") != 3 {
		t.Errorf("Fields() = %q: every field must be one token", f)
	}
}
