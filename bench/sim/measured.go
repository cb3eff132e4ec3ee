package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"

	"github.com/newtricks/newtricks/bench/internal/simfile"
)

// loadMeasured reads and checks a -sim-out file (bounded: it is a few KiB).
func loadMeasured(path string) (*simfile.Run, error) {
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
	var m simfile.Run
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

// params is the model of ph with f.
func params(ph *simfile.Phase, f fit, seed uint64) Params {
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
func (f fit) errorOn(ph *simfile.Phase, seed uint64) (float64, []row) {
	names := make([]string, 0, len(ph.Barrier))
	for n := range ph.Barrier {
		names = append(names, n)
	}
	sort.Strings(names)
	p := params(ph, f, seed)
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
