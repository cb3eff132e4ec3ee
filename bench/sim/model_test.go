package main

import (
	"math"
	"testing"
)

// The model against what can be computed by hand.
func TestModelLimits(t *testing.T) {
	p := Params{Nodes: 12, ReadBW: 16 * mib, XferBW: 16 * mib, Xceivers: 4096, Readers: 32, Files: 4,
		BlocksPerFile: 2, BlockBytes: 8 * mib, InitialHolders: 3, Interval: 1, Heartbeat: 1, Seed: 3}
	total := float64(p.Readers*p.Files*p.BlocksPerFile) * p.BlockBytes
	// Replication 3 on 3 DataNodes: at best total / (3 B), at worst the busiest of three.
	r := Run(p, Case{Name: "rep3", Factor: 3})
	if lo := total / (3 * p.ReadBW); r.Barrier < lo*0.999 || r.Barrier > 1.6*lo {
		t.Fatalf("rep3 barrier %.1f s, bounds [%.1f, %.1f]", r.Barrier, lo, 1.6*lo)
	}
	// Every DataNode holding every block, balanced reads: the physical limit, within the rounding of
	// 32 readers over 12 replicas (3 instead of 2.67 per replica: 1.125).
	p.InitialHolders = 12
	c := Case{Name: "all", Factor: 12, At: -100, MaxStreams: 32, Multiplier: 16, Balanced: true}
	r = Run(p, c)
	limit := total / (12 * p.ReadBW)
	if r.Barrier < limit*0.999 || r.Barrier > 1.25*limit {
		t.Fatalf("balanced at factor 12: barrier %.1f s, limit %.1f s", r.Barrier, limit)
	}
	if math.IsNaN(r.Ready) || r.Ready < 0 || r.MaxShare > 1.2 {
		t.Fatalf("ready %v share %.2f", r.Ready, r.MaxShare)
	}
	// Balanced reads never do worse than a random pick here.
	c.Balanced = false
	if u := Run(p, c); u.Barrier < r.Barrier*0.999 {
		t.Fatalf("random %.1f s beat balanced reads %.1f s", u.Barrier, r.Barrier)
	}
}
