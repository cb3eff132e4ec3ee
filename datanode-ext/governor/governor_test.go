package governor

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestHysteresis(t *testing.T) {
	g, err := New(Config{High: 0.8, Low: 0.6}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var s Sample
	step := func(otherFrac, ownFrac float64) bool {
		// 2 CPUs, 1 second: 2 CPU-seconds of total.
		s.Total += 2
		s.Own += 2 * ownFrac
		s.Busy += 2 * (otherFrac + ownFrac)
		g.Observe(s)
		return g.Shedding()
	}
	step(0, 0)
	for i, c := range []struct {
		other, own float64
		want       bool
	}{
		{0.5, 0.4, false}, // busy 90% but mostly our own transforms: no shedding
		{0.79, 0.2, false},
		{0.85, 0.1, true},
		{0.7, 0, true}, // between low and high: stays shedding
		{0.61, 0, true},
		{0.59, 0, false},
		{0.75, 0, false}, // between: stays not shedding
		{0.95, 0, true},
	} {
		if got := step(c.other, c.own); got != c.want {
			t.Fatalf("sample %d (other %v own %v): shedding=%v, want %v", i, c.other, c.own, got, c.want)
		}
	}
	if st := g.Status(); st.Transitions != 3 {
		t.Errorf("transitions %d, want 3", st.Transitions)
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []Config{{High: 1.5}, {High: 0.5, Low: 0.6}, {High: 0.8, Low: 0.7, Interval: time.Millisecond}} {
		if _, err := New(c, nil); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
	if _, err := New(Config{High: 1}, nil); err != nil {
		t.Error(err)
	}
}

func TestSystemSamplerSeesLoad(t *testing.T) {
	s, err := NewSystemSampler()
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Sample(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// Burn 0.2 CPU-seconds (however long that takes on a busy machine): the sampler must see
	// them as this process's time and as busy time of the node.
	deadline := time.Now().Add(20 * time.Second)
	var b Sample
	for x := 0; ; x++ {
		if x%(1<<20) == 0 {
			b, _ = s.Sample(context.Background())
			if b.Own-a.Own >= 0.2 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the sampler saw only %.2f s of own CPU in 20 s of busy loop", b.Own-a.Own)
			}
		}
	}
	if b.Busy-a.Busy < 0.15 || b.Total <= a.Total {
		t.Errorf("0.2 s of own CPU but busy %.2f s, total %.2f s", b.Busy-a.Busy, b.Total-a.Total)
	}
}

func TestSystemSamplerFollowsAffinity(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("needs 2 CPUs")
	}
	// Pinned to CPU 0 (every thread, as taskset -a does), the sampler counts one CPU's time,
	// about half of what the whole machine accumulates.
	var old, one unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		t.Fatal(err)
	}
	defer pinAll(t, old)
	s, _ := NewSystemSampler()
	a, _ := s.Sample(context.Background())
	time.Sleep(200 * time.Millisecond)
	b, _ := s.Sample(context.Background())
	one.Set(0)
	pinAll(t, one)
	c, _ := s.Sample(context.Background())
	time.Sleep(200 * time.Millisecond)
	d, _ := s.Sample(context.Background())
	all, single := b.Total-a.Total, d.Total-c.Total
	if single <= 0 || single > 0.75*all || d.CPUs != 1 || d.Set != "0" {
		t.Errorf("pinned to CPU 0 the sampler saw %.2f CPU-s in 200ms on CPUs %q, all CPUs %.2f", single, d.Set, all)
	}
}

// TestSystemSamplerStartedPinned: a process started on CPU 0 (so runtime.NumCPU is 1) and
// then moved to CPU 1, as bench-offload does with datanode-ext, counts CPU 1 only. The
// sampler used to compare the mask with runtime.NumCPU and then counted both CPUs (a loaded
// storage core read as half load: the node never shed).
func TestSystemSamplerStartedPinned(t *testing.T) {
	if os.Getenv("GOVERNOR_TEST_CHILD") == "1" {
		if runtime.NumCPU() != 1 {
			t.Fatalf("child started with NumCPU %d, want 1", runtime.NumCPU())
		}
		var cpu1 unix.CPUSet
		cpu1.Set(1)
		pinAll(t, cpu1)
		s, _ := NewSystemSampler()
		a, _ := s.Sample(context.Background())
		time.Sleep(300 * time.Millisecond)
		b, err := s.Sample(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if b.CPUs != 1 || b.Set != "1" || b.Total-a.Total > 0.45 {
			t.Fatalf("moved to CPU 1 the sampler counts CPUs %q (%d), %.2f CPU-s in 300 ms", b.Set, b.CPUs, b.Total-a.Total)
		}
		return
	}
	if runtime.NumCPU() < 2 {
		t.Skip("needs 2 CPUs")
	}
	// Start the child from a thread pinned to CPU 0: it inherits that mask.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var old, cpu0 unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		t.Fatal(err)
	}
	cpu0.Set(0)
	if err := unix.SchedSetaffinity(0, &cpu0); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSystemSamplerStartedPinned$", "-test.v")
	cmd.Env = append(os.Environ(), "GOVERNOR_TEST_CHILD=1")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Start()
	unix.SchedSetaffinity(0, &old)
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v\n%s", err, out.String())
	}
}

// pinAll sets the affinity of every thread of this process.
func pinAll(t *testing.T, set unix.CPUSet) {
	t.Helper()
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range tasks {
		tid, err := strconv.Atoi(filepath.Base(p))
		if err != nil {
			continue
		}
		if err := unix.SchedSetaffinity(tid, &set); err != nil && err != unix.ESRCH {
			t.Fatal(err)
		}
	}
}

func TestSetThresholds(t *testing.T) {
	g, _ := New(Config{High: 0.5, Low: 0.4}, nil)
	g.Observe(Sample{Total: 1})
	g.Observe(Sample{Total: 2, Busy: 0.9})
	if !g.Shedding() {
		t.Fatal("not shedding at 90%")
	}
	ch := g.Changed()
	if err := g.SetThresholds(1, 1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	default:
		t.Fatal("raising the threshold to 1 did not stop shedding at once")
	}
	g.Observe(Sample{Total: 3, Busy: 1.9})
	if g.Shedding() {
		t.Fatal("shedding with threshold 1")
	}
	if err := g.SetThresholds(0.5, 0.6); err == nil {
		t.Fatal("low > high accepted")
	}
}
