package quick

import (
	"flag"
	"testing"
)

func TestApplyKeepsExplicitFlags(t *testing.T) {
	old := flag.CommandLine
	defer func() { flag.CommandLine = old }()
	flag.CommandLine = flag.NewFlagSet("t", flag.ContinueOnError)
	rounds := flag.Int("rounds", 3, "")
	steps := flag.Int("steps", 300, "")
	if err := flag.CommandLine.Parse([]string{"-steps", "7"}); err != nil {
		t.Fatal(err)
	}
	if err := Apply(map[string]string{"rounds": "1", "steps": "40"}); err != nil {
		t.Fatal(err)
	}
	if *rounds != 1 || *steps != 7 {
		t.Fatalf("rounds %d steps %d, want 1 (quick) and 7 (explicit)", *rounds, *steps)
	}
	if err := Apply(map[string]string{"nosuch": "1"}); err == nil {
		t.Fatal("an unknown flag in the quick set was accepted")
	}
	if got := String(map[string]string{"b": "2", "a": "1"}); got != "-a 1, -b 2" {
		t.Fatalf("String = %q", got)
	}
}
