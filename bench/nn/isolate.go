package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/newtricks/newtricks/harness/cluster"
)

// What keeps the measurement about the NameNode: on a small machine the benchmark's client (a
// JVM with four busy threads) and the NameNode share the cores, and an edit log on a real disk
// adds fsync waits that vary from round to round. Every cluster gets the same treatment, so none
// of this favours a configuration: it removes noise that is not the NameNode's.

// placement is where the clusters and the client run.
type placement struct {
	clusterCPU, clientCPU int // -1: not pinned
}

// choosePlacement gives the clusters the first CPU this process may use and the client the
// second, or pins nothing when fewer than two are available.
func choosePlacement(pin bool) (placement, string) {
	p := placement{clusterCPU: -1, clientCPU: -1}
	if !pin {
		return p, "not pinned (-pin=false): client and clusters share every CPU"
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return p, fmt.Sprintf("not pinned: sched_getaffinity: %v", err)
	}
	var cpus []int
	for i := 0; i < runtime.NumCPU()*4 && len(cpus) < 2; i++ {
		if set.IsSet(i) {
			cpus = append(cpus, i)
		}
	}
	if len(cpus) < 2 {
		return p, fmt.Sprintf("not pinned: only %d CPU available", len(cpus))
	}
	p.clusterCPU, p.clientCPU = cpus[0], cpus[1]
	return p, fmt.Sprintf("cluster under test (every process, one cluster running at a time) on CPU %d, benchmark client on CPU %d",
		p.clusterCPU, p.clientCPU)
}

// pinProcesses sets the affinity of every thread of pids to cpu (cluster.PinThreads).
func pinProcesses(pids []int, cpu int) error {
	if cpu < 0 {
		return nil
	}
	for _, pid := range pids {
		if _, err := cluster.PinThreads(pid, cpu); err != nil {
			return err
		}
	}
	return nil
}

// clientCommand is argv prefixed so that the client runs on the client CPU.
func (p placement) clientCommand(argv []string) []string {
	if p.clientCPU < 0 {
		return argv
	}
	return append([]string{"taskset", "-c", strconv.Itoa(p.clientCPU)}, argv...)
}

// clusterDir picks where the clusters' directories (edit logs included) live: dir if given,
// else /dev/shm when it is a writable tmpfs with room, else the system's temporary directory.
func clusterDir(dir string) (string, string) {
	if dir != "" {
		return dir, "as asked (-dir)"
	}
	var st unix.Statfs_t
	const tmpfsMagic = 0x01021994
	if err := unix.Statfs("/dev/shm", &st); err == nil && int64(st.Type) == tmpfsMagic &&
		int64(st.Bavail)*int64(st.Bsize) > 4<<30 && unix.Access("/dev/shm", unix.W_OK) == nil {
		return "/dev/shm", "tmpfs: edit logs without disk waits, the same for every cluster"
	}
	return os.TempDir(), "no tmpfs with 4 GiB free at /dev/shm: edit logs on disk (fsync waits add noise)"
}

// cpuMeter reads the CPU of one cluster's NameNode group (the NameNode JVM and its
// co-processes) from a cpuacct cgroup of its own, so that the CPU of an operation can be taken
// over exactly the tool's timed phase (its "Starting" line to start + its own elapsed time),
// leaving out the tool's clean-up (a recursive delete of everything the operation made).
type cpuMeter struct {
	dir string
}

// cgroupRoot is this benchmark's cpuacct cgroup (cgroup v1), created on first use.
func cgroupRoot() (string, error) {
	const v1 = "/sys/fs/cgroup/cpuacct"
	if _, err := os.Stat(filepath.Join(v1, "cpuacct.usage")); err != nil {
		return "", fmt.Errorf("no cgroup v1 cpuacct controller at %s", v1)
	}
	root := filepath.Join(v1, fmt.Sprintf("newtricks-bench-nn-%d", os.Getpid()))
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", err
	}
	return root, nil
}

// newMeter makes the cgroup of one cluster and moves pids (whole processes) into it.
func newMeter(root, name string, pids []int) (*cpuMeter, error) {
	m := &cpuMeter{dir: filepath.Join(root, name)}
	if err := os.MkdirAll(m.dir, 0o755); err != nil {
		return nil, err
	}
	if err := m.add(pids); err != nil {
		return nil, err
	}
	return m, nil
}

// add moves processes (with every thread) into the meter's cgroup; children forked later
// start in it.
func (m *cpuMeter) add(pids []int) error {
	for _, pid := range pids {
		err := os.WriteFile(filepath.Join(m.dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644)
		if err != nil && !errors.Is(err, unix.ESRCH) {
			return fmt.Errorf("move %d into %s: %w", pid, m.dir, err)
		}
	}
	return nil
}

// usage is the group's CPU so far, in ns.
func (m *cpuMeter) usage() (int64, error) {
	b, err := os.ReadFile(filepath.Join(m.dir, "cpuacct.usage"))
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}

// removeCgroups removes the benchmark's cgroups (they must be empty: after every cluster
// stopped).
func removeCgroups(root string) {
	if root == "" {
		return
	}
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if e.IsDir() {
			_ = os.Remove(filepath.Join(root, e.Name()))
		}
	}
	_ = os.Remove(root)
}

// usageSample is a reading of a meter.
type usageSample struct {
	at time.Time
	ns int64
}

// sampler reads a meter every period on an OS thread of its own (pinned to cpu when >= 0,
// so it does not run on the NameNode's CPU), from start() until stop().
type sampler struct {
	m      *cpuMeter
	period time.Duration
	cpu    int

	mu   sync.Mutex
	s    []usageSample
	err  error
	done chan struct{}
	quit chan struct{}
}

func newSampler(m *cpuMeter, period time.Duration, cpu int) *sampler {
	return &sampler{m: m, period: period, cpu: cpu, done: make(chan struct{}), quit: make(chan struct{})}
}

// start takes the first reading before returning, then keeps sampling in the background.
func (s *sampler) start() {
	s.read()
	go func() {
		defer close(s.done)
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		if s.cpu >= 0 {
			var set unix.CPUSet
			set.Set(s.cpu)
			_ = unix.SchedSetaffinity(0, &set)
		}
		t := time.NewTicker(s.period)
		defer t.Stop()
		for {
			select {
			case <-s.quit:
				s.read()
				return
			case <-t.C:
				s.read()
			}
		}
	}()
}

func (s *sampler) read() {
	ns, err := s.m.usage()
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if s.err == nil {
			s.err = err
		}
		return
	}
	s.s = append(s.s, usageSample{at: now, ns: ns})
}

// stop ends sampling (after a last reading) and returns the readings.
func (s *sampler) stop() ([]usageSample, error) {
	close(s.quit)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.s, s.err
}

// usageAt interpolates the readings linearly at t; before the first or after the last reading
// it is the first or last (the caller checks that t lies within them).
func usageAt(s []usageSample, t time.Time) float64 {
	i := sort.Search(len(s), func(i int) bool { return !s[i].at.Before(t) })
	switch {
	case i == 0:
		return float64(s[0].ns)
	case i == len(s):
		return float64(s[len(s)-1].ns)
	}
	a, b := s[i-1], s[i]
	span := b.at.Sub(a.at)
	if span <= 0 {
		return float64(b.ns)
	}
	f := float64(t.Sub(a.at)) / float64(span)
	return float64(a.ns) + f*float64(b.ns-a.ns)
}
