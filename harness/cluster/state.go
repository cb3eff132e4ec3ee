package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// StateFile is the name of the JSON file under Config.BaseDir that records a started
// cluster, so that another process (the CLI) can find and stop it.
const StateFile = "state.json"

// ErrNoState means BaseDir holds no state.json: no cluster was started there or it was
// stopped.
var ErrNoState = errors.New("no cluster state")

// State is the content of state.json.
type State struct {
	Name      string        `json:"name"`
	BaseDir   string        `json:"base_dir"`
	StartedAt time.Time     `json:"started_at"`
	StartupMS int64         `json:"startup_ms"`
	NameNode  DaemonState   `json:"namenode"`
	DataNodes []DaemonState `json:"datanodes"`
	// HA is set for an HA cluster; NameNode is then its NameNode 0.
	HA        *HAState      `json:"ha,omitempty"`
	Launch    launchSpec    `json:"launch"`
	StopGrace time.Duration `json:"stop_grace_ns"`
}

// HAState records an HA cluster's nameservice and daemons in state.json.
type HAState struct {
	Nameservice  string        `json:"nameservice"`
	Manual       bool          `json:"manual,omitempty"`
	NameNodes    []DaemonState `json:"namenodes"`
	JournalNodes []DaemonState `json:"journalnodes"`
	ZooKeeper    *DaemonState  `json:"zookeeper,omitempty"`
	ZKFCs        []DaemonState `json:"zkfcs,omitempty"`
	Ports        HAPorts       `json:"ports"`
}

// DaemonState records one daemon in state.json.
type DaemonState struct {
	Daemon Daemon `json:"daemon"`
	// PID is the JVM's pid and process group id.
	PID      int            `json:"pid"`
	NameNode *NameNodePorts `json:"namenode_ports,omitempty"`
	DataNode *DataNodePorts `json:"datanode_ports,omitempty"`
	LogPath  string         `json:"log"`
	ConfDir  string         `json:"conf_dir"`
}

func (c *Cluster) statePath() string { return filepath.Join(c.cfg.BaseDir, StateFile) }

// State returns the cluster's current state, as written to state.json.
func (c *Cluster) State() State {
	c.mu.Lock()
	defer c.mu.Unlock()
	pid := func(p *process) int {
		if p == nil {
			return 0
		}
		return p.pid
	}
	at := func(ps []*process, i int) *process {
		if i < len(ps) {
			return ps[i]
		}
		return nil
	}
	plain := func(d Daemon, p *process) DaemonState {
		return DaemonState{Daemon: d, PID: pid(p), LogPath: c.LogPath(d), ConfDir: c.confDir(d)}
	}
	st := State{
		Name:      c.cfg.Name,
		BaseDir:   c.cfg.BaseDir,
		StartedAt: c.startedAt,
		StartupMS: c.startup.Milliseconds(),
		Launch:    c.spec,
		StopGrace: c.cfg.StopGrace,
	}
	nnStates := make([]DaemonState, len(c.nnPorts))
	for i := range c.nnPorts {
		p := c.nnPorts[i]
		d := c.nameNodeDaemon(i)
		nnStates[i] = plain(d, at(c.nns, i))
		nnStates[i].NameNode = &p
	}
	if len(nnStates) > 0 {
		st.NameNode = nnStates[0]
	}
	for i, p := range c.dnPorts {
		p := p
		d := DataNode(i)
		ds := plain(d, at(c.dns, i))
		ds.DataNode = &p
		st.DataNodes = append(st.DataNodes, ds)
	}
	if c.cfg.HA != nil && c.ha != nil {
		h := &HAState{Nameservice: c.cfg.HA.Nameservice, Manual: c.cfg.HA.Manual, NameNodes: nnStates, Ports: *c.ha}
		for i := range c.jns {
			h.JournalNodes = append(h.JournalNodes, plain(JournalNode(i), c.jns[i]))
		}
		if !c.cfg.HA.Manual {
			zk := plain(ZooKeeper, c.zk)
			h.ZooKeeper = &zk
			for i := range c.zkfcs {
				h.ZKFCs = append(h.ZKFCs, plain(ZKFC(i), c.zkfcs[i]))
			}
		}
		st.HA = h
	}
	return st
}

func (c *Cluster) writeState() error {
	b, err := json.MarshalIndent(c.State(), "", "  ")
	if err != nil {
		return err
	}
	tmp := c.statePath() + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	return os.Rename(tmp, c.statePath())
}

// Attach returns the cluster recorded in baseDir/state.json, started by another process
// (typically `newtricks cluster up`). The returned Cluster can report status, open clients,
// kill and restart DataNodes (restarted ones are detached too) and Stop the cluster, which
// removes state.json. Pids are only signalled while their command line still names baseDir.
func Attach(baseDir string) (*Cluster, error) {
	abs, err := filepath.Abs(baseDir)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(abs, StateFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w in %s", ErrNoState, abs)
	}
	if err != nil {
		return nil, err
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("parse %s: %w", filepath.Join(abs, StateFile), err)
	}
	if st.NameNode.NameNode == nil {
		return nil, fmt.Errorf("parse %s: no namenode ports", filepath.Join(abs, StateFile))
	}
	spec := st.Launch
	spec.Detached = true
	c := &Cluster{
		cfg: Config{
			Name: st.Name, BaseDir: abs, DataNodes: len(st.DataNodes), NoDataNodes: len(st.DataNodes) == 0,
			HadoopLib: spec.HadoopLib, Java: spec.Java, JavaOpts: spec.JavaOpts, Env: spec.Env,
			ExtraClasspath: spec.ExtraClasspath, NameNodeHeap: spec.NameNodeHeap, DataNodeHeap: spec.DataNodeHeap,
			SmallHeap: spec.SmallHeap, StopGrace: st.StopGrace, Detached: true, FullJIT: spec.FullJIT, NoCDS: spec.NoCDS,
		}.withDefaults(),
		spec:      spec,
		startup:   time.Duration(st.StartupMS) * time.Millisecond,
		startedAt: st.StartedAt,
	}
	marker := c.marker()
	proc := func(d DaemonState) *process {
		return &process{daemon: d.Daemon, pid: d.PID, logPath: d.LogPath, marker: marker}
	}
	nnStates := []DaemonState{st.NameNode}
	if st.HA != nil {
		c.cfg.HA = &HAConfig{Nameservice: st.HA.Nameservice, Manual: st.HA.Manual}
		ports := st.HA.Ports
		c.ha = &ports
		nnStates = st.HA.NameNodes
		for _, d := range st.HA.JournalNodes {
			c.jns = append(c.jns, proc(d))
		}
		if st.HA.ZooKeeper != nil {
			c.zk = proc(*st.HA.ZooKeeper)
		}
		for _, d := range st.HA.ZKFCs {
			c.zkfcs = append(c.zkfcs, proc(d))
		}
	}
	for _, d := range nnStates {
		if d.NameNode == nil {
			return nil, fmt.Errorf("parse %s: no ports of %s", filepath.Join(abs, StateFile), d.Daemon)
		}
		c.nnPorts = append(c.nnPorts, *d.NameNode)
		c.nns = append(c.nns, proc(d))
	}
	if archive, _ := cdsPaths(spec); archive != "" && !spec.NoCDS {
		c.cds = &cdsState{archive: archive}
	}
	for _, d := range st.DataNodes {
		var p DataNodePorts
		if d.DataNode != nil {
			p = *d.DataNode
		}
		c.dnPorts = append(c.dnPorts, p)
		c.dns = append(c.dns, proc(d))
	}
	return c, nil
}
