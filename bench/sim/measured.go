package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
)

// measuredRun is what `bench-hotspot -sim-out` writes: the run's provenance and, per
// configuration, its setup and each case's barrier median (min, max).
type measuredRun struct {
	Commit    string           `json:"commit"`
	Dirty     bool             `json:"dirty"`
	Date      string           `json:"date"`
	LoadStart string           `json:"load_start"`
	LoadEnd   string           `json:"load_end"`
	Command   string           `json:"command"`
	Note      string           `json:"note,omitempty"`
	Phases    []*measuredPhase `json:"phases"`
}

type measuredPhase struct {
	Role      string                `json:"role"`
	DataNodes int                   `json:"datanodes"`
	Bandwidth int64                 `json:"dn_bandwidth"`
	Readers   int                   `json:"readers"`
	Files     int                   `json:"files"`
	FileBytes int64                 `json:"file_bytes"`
	BlockSize int64                 `json:"block_size"`
	Interval  int                   `json:"redundancy_interval_s"`
	LeadS     float64               `json:"lead_s"`
	Factor    int                   `json:"factor"`
	Barrier   map[string][3]float64 `json:"barrier_s"`
}

// loadMeasured reads and checks a -sim-out file (bounded: it is a few KiB).
func loadMeasured(path string) (*measuredRun, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("-from: %w", err)
	}
	if fi.Size() > 1<<20 {
		return nil, fmt.Errorf("-from %s: %d bytes, a bench-hotspot -sim-out file is a few KiB", path, fi.Size())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("-from: %w", err)
	}
	var m measuredRun
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("-from %s: %w", path, err)
	}
	for _, ph := range m.Phases {
		switch {
		case ph.DataNodes < 3 || ph.DataNodes > 100000:
			return nil, fmt.Errorf("-from %s: %s configuration: %d DataNodes", path, ph.Role, ph.DataNodes)
		case ph.Bandwidth <= 0 || ph.Readers <= 0 || ph.Files <= 0 || ph.FileBytes <= 0 || ph.BlockSize <= 0 || ph.Interval <= 0 || ph.Factor < 3 || ph.LeadS < 0:
			return nil, fmt.Errorf("-from %s: %s configuration: setup missing or out of range: %+v", path, ph.Role, *ph)
		case len(ph.Barrier) == 0:
			return nil, fmt.Errorf("-from %s: %s configuration: no barriers", path, ph.Role)
		}
		for cs, v := range ph.Barrier {
			if _, ok := simCase(cs, ph.Factor, ph.LeadS); !ok {
				return nil, fmt.Errorf("-from %s: %s configuration: unknown case %q", path, ph.Role, cs)
			}
			if !(v[0] > 0) {
				return nil, fmt.Errorf("-from %s: %s configuration: case %s has median %v", path, ph.Role, cs, v[0])
			}
		}
	}
	return &m, nil
}

func (m *measuredRun) phase(role string) *measuredPhase {
	for _, ph := range m.Phases {
		if ph.Role == role {
			return ph
		}
	}
	return nil
}

// simCase is the model's version of one bench-hotspot case.
func simCase(name string, factor int, lead float64) (Case, bool) {
	stock := Case{Name: name, Factor: factor, MaxStreams: 2, Multiplier: 2}
	boosted := Case{Name: name, Factor: factor, At: -lead, MaxStreams: 32, Multiplier: 16}
	switch name {
	case "rep3":
		stock.Factor = 3
		return stock, true
	case "setrep-storm":
		return stock, true
	case "setrep-ahead":
		stock.At = -lead
		return stock, true
	case "hint":
		boosted.Balanced = true
		return boosted, true
	case "replication-only":
		return boosted, true
	case "balanced-only":
		stock.Factor, stock.Balanced = 3, true
		return stock, true
	}
	return Case{}, false
}

// fit is the model's free parameters.
type fit struct {
	Eta     float64 // effective DataNode bandwidth over the configured throttle
	Arrival float64 // readers start uniformly within this many seconds
}

func (ph *measuredPhase) params(f fit, seed uint64) Params {
	bpf := max(1, int(math.Ceil(float64(ph.FileBytes)/float64(ph.BlockSize))))
	bw := f.Eta * float64(ph.Bandwidth)
	return Params{Nodes: ph.DataNodes, ReadBW: bw, XferBW: bw, Xceivers: 4096, Readers: ph.Readers, Arrival: f.Arrival,
		OpenDelay: 0.01, Files: ph.Files, BlocksPerFile: bpf, BlockBytes: float64(ph.FileBytes) / float64(bpf),
		InitialHolders: 3, Interval: float64(ph.Interval), Heartbeat: float64(ph.Interval), Seed: seed}
}

type row struct {
	name          string
	measured, sim float64
	share         float64
}

func (r row) rel() float64 { return (r.sim - r.measured) / r.measured }

// errorOn runs every measured case of ph with f (the median of 5 seeds) and returns the mean
// |sim - measured| / measured and the rows, in case-name order.
func (f fit) errorOn(ph *measuredPhase, seed uint64) (float64, []row) {
	names := make([]string, 0, len(ph.Barrier))
	for n := range ph.Barrier {
		names = append(names, n)
	}
	sort.Strings(names)
	p := ph.params(f, seed)
	var rows []row
	var sum float64
	for _, n := range names {
		c, _ := simCase(n, ph.Factor, ph.LeadS)
		r := median(p, c, 5)
		rw := row{name: n, measured: ph.Barrier[n][0], sim: r.Barrier, share: r.MaxShare}
		sum += math.Abs(rw.rel())
		rows = append(rows, rw)
	}
	return sum / float64(len(rows)), rows
}
