package hotspot

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/newtricks/newtricks/namenode-ext/nnhosttest"
)

// BenchmarkObserveAudit is the co-process's cost of one audited open in reactive mode, for a
// stream of opens of distinct files by one client (NNThroughputBenchmark's pattern).
func BenchmarkObserveAudit(b *testing.B) {
	cfg := DefaultConfig()
	cfg.Reactive = true
	cfg.ReactiveUser = "svc"
	m, err := New(cfg, nnhosttest.NewFakeHost(3), hclog.NewNullLogger())
	if err != nil {
		b.Fatal(err)
	}
	paths := make([]string, 50_000)
	for i := range paths {
		paths[i] = fmt.Sprintf("/nnbench-1764590000/open/ThroughputBenchDir%d/simpleFile%d", i/1000, i)
	}
	t0 := time.Unix(1_764_590_000, 0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// 5000 opens per second, as in the benchmark.
		m.ObserveAudit("open", paths[i%len(paths)], "root", "127.0.0.1", t0.Add(time.Duration(i)*200*time.Microsecond))
	}
}
