package governor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shirou/gopsutil/v3/cpu"
	"github.com/shirou/gopsutil/v3/process"
	"golang.org/x/sys/unix"
)

// ErrConfig is wrapped by configuration errors.
var ErrConfig = errors.New("governor: bad configuration")

// Config of the governor. Keys are under newtricks.datanode.ext.offload.
type Config struct {
	// High (cpu.high, default 0.8): shed when the CPU used by everything but datanode-ext
	// exceeds this fraction of the node's CPUs. 1 never sheds.
	High float64
	// Low (cpu.low, default 0.7): stop shedding below this fraction; Low <= High.
	Low float64
	// Interval (cpu.interval.ms, default 500 ms) between samples.
	Interval time.Duration
}

// Defaults fills zero fields.
func (c Config) Defaults() Config {
	if c.High == 0 {
		c.High = 0.8
	}
	if c.Low == 0 {
		c.Low = min(0.7, c.High)
	}
	if c.Interval == 0 {
		c.Interval = 500 * time.Millisecond
	}
	return c
}

// Validate checks ranges.
func (c Config) Validate() error {
	switch {
	case c.High <= 0 || c.High > 1:
		return fmt.Errorf("%w: high threshold %v must be in (0, 1]", ErrConfig, c.High)
	case c.Low <= 0 || c.Low > c.High:
		return fmt.Errorf("%w: low threshold %v must be in (0, high=%v]", ErrConfig, c.Low, c.High)
	case c.Interval < 10*time.Millisecond || c.Interval > time.Minute:
		return fmt.Errorf("%w: interval %v must be in [10ms, 1m]", ErrConfig, c.Interval)
	}
	return nil
}

// Sample is one reading of cumulative CPU seconds.
type Sample struct {
	// Busy and Total are summed over the CPUs counted (Total includes idle); Own is this
	// process's user+system time.
	Busy, Total, Own float64
	// CPUs counted (their number) and which (a list such as "1" or "0,1"); a change of
	// either resets the baseline.
	CPUs int
	Set  string
}

// Sampler reads cumulative CPU times.
type Sampler interface {
	Sample(ctx context.Context) (Sample, error)
}

// SystemSampler reads /proc through gopsutil: the CPU times of the CPUs this process may run
// on (its affinity mask, the main thread's as `taskset -p` shows and sets it, read at every
// sample: a DataNode pinned to some cores, or moved after start, is measured on those cores
// only) and this process's own times.
type SystemSampler struct {
	proc *process.Process
	pid  int
}

// NewSystemSampler returns a sampler of this node and this process.
func NewSystemSampler() (*SystemSampler, error) {
	p, err := process.NewProcess(int32(os.Getpid()))
	if err != nil {
		return nil, fmt.Errorf("governor: own process: %w", err)
	}
	return &SystemSampler{proc: p, pid: os.Getpid()}, nil
}

// Sample implements Sampler.
func (s *SystemSampler) Sample(ctx context.Context) (Sample, error) {
	// The mask is compared with the machine's CPUs as /proc/stat lists them, never with
	// runtime.NumCPU: that is the mask at process start, so a datanode-ext started on one
	// core and moved to another would count every CPU of the machine.
	var set unix.CPUSet
	masked := unix.SchedGetaffinity(s.pid, &set) == nil && set.Count() > 0
	ts, err := cpu.TimesWithContext(ctx, true)
	if err != nil || len(ts) == 0 {
		return Sample{}, fmt.Errorf("governor: cpu times: %v", err)
	}
	var smp Sample
	var ids []string
	for _, t := range ts {
		id := strings.TrimPrefix(t.CPU, "cpu")
		n, err := strconv.Atoi(id)
		if masked && (err != nil || !set.IsSet(n)) {
			continue
		}
		total := t.User + t.System + t.Idle + t.Nice + t.Iowait + t.Irq + t.Softirq + t.Steal
		smp.Total += total
		smp.Busy += total - t.Idle - t.Iowait
		smp.CPUs++
		ids = append(ids, id)
	}
	if smp.CPUs == 0 {
		return Sample{}, fmt.Errorf("governor: none of the machine's %d CPUs is in the affinity mask", len(ts))
	}
	smp.Set = strings.Join(ids, ",")
	own, err := s.proc.TimesWithContext(ctx)
	if err != nil {
		return Sample{}, fmt.Errorf("governor: process times: %v", err)
	}
	smp.Own = own.User + own.System
	return smp, nil
}

// Status is the governor's state.
type Status struct {
	Shedding    bool
	Other, Own  float64 // fractions of the node's CPUs over the last interval
	High, Low   float64
	Transitions int64 // shed on/off changes since start
	Samples     int64
}

// Governor tracks the node's CPU and decides whether to shed.
type Governor struct {
	sampler Sampler

	mu       sync.Mutex
	cfg      Config
	st       Status
	last     Sample
	haveLast bool
	changed  chan struct{}
}

// New returns a governor; call Run to start sampling.
func New(cfg Config, s Sampler) (*Governor, error) {
	cfg = cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Governor{sampler: s, cfg: cfg, st: Status{High: cfg.High, Low: cfg.Low}, changed: make(chan struct{})}, nil
}

// Run samples every interval until ctx ends.
func (g *Governor) Run(ctx context.Context) {
	for {
		if s, err := g.sampler.Sample(ctx); err == nil {
			g.Observe(s)
		}
		g.mu.Lock()
		iv := g.cfg.Interval
		g.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-time.After(iv):
		}
	}
}

// Observe feeds one reading (Run calls it; tests call it directly).
func (g *Governor) Observe(s Sample) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.haveLast || s.CPUs != g.last.CPUs || s.Set != g.last.Set {
		g.last, g.haveLast = s, true
		return
	}
	dt := s.Total - g.last.Total
	if dt <= 0 {
		return
	}
	own := max(0, (s.Own-g.last.Own)/dt)
	other := max(0, (s.Busy-g.last.Busy)/dt-own)
	g.last = s
	g.st.Own, g.st.Other = min(own, 1), min(other, 1)
	g.st.Samples++
	was := g.st.Shedding
	switch {
	case g.cfg.High >= 1:
		g.st.Shedding = false
	case !was && other > g.cfg.High:
		g.st.Shedding = true
	case was && other < g.cfg.Low:
		g.st.Shedding = false
	}
	if was != g.st.Shedding {
		g.st.Transitions++
		close(g.changed)
		g.changed = make(chan struct{})
	}
}

// Shedding reports whether the node is shedding transforms now.
func (g *Governor) Shedding() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.st.Shedding
}

// Changed returns a channel closed at the next shed on/off transition.
func (g *Governor) Changed() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.changed
}

// Status returns a snapshot.
func (g *Governor) Status() Status {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.st
}

// SetThresholds changes the thresholds at run time (an administrator's call). The shedding
// state is re-evaluated at the next sample.
func (g *Governor) SetThresholds(high, low float64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	c := g.cfg
	c.High, c.Low = high, low
	if err := c.Validate(); err != nil {
		return err
	}
	g.cfg = c
	g.st.High, g.st.Low = high, low
	if high >= 1 && g.st.Shedding { // never shed: stop now, not at the next sample
		g.st.Shedding = false
		g.st.Transitions++
		close(g.changed)
		g.changed = make(chan struct{})
	}
	return nil
}
