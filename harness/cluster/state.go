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
	Launch    launchSpec    `json:"launch"`
	StopGrace time.Duration `json:"stop_grace_ns"`
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
	nn := c.nnPorts
	st := State{
		Name:      c.cfg.Name,
		BaseDir:   c.cfg.BaseDir,
		StartedAt: c.startedAt,
		StartupMS: c.startup.Milliseconds(),
		NameNode:  DaemonState{Daemon: NameNode, PID: pid(c.nn), NameNode: &nn, LogPath: c.LogPath(NameNode), ConfDir: c.confDir(NameNode)},
		Launch:    c.spec,
		StopGrace: c.cfg.StopGrace,
	}
	for i, p := range c.dnPorts {
		p := p
		var proc *process
		if i < len(c.dns) {
			proc = c.dns[i]
		}
		d := DataNode(i)
		st.DataNodes = append(st.DataNodes, DaemonState{Daemon: d, PID: pid(proc), DataNode: &p, LogPath: c.LogPath(d), ConfDir: c.confDir(d)})
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
			StopGrace: st.StopGrace, Detached: true, FullJIT: spec.FullJIT, NoCDS: spec.NoCDS,
		}.withDefaults(),
		spec:      spec,
		nnPorts:   *st.NameNode.NameNode,
		startup:   time.Duration(st.StartupMS) * time.Millisecond,
		startedAt: st.StartedAt,
	}
	if archive, _ := cdsPaths(spec); archive != "" && !spec.NoCDS {
		c.cds = &cdsState{archive: archive}
	}
	marker := c.marker()
	c.nn = &process{daemon: NameNode, pid: st.NameNode.PID, logPath: st.NameNode.LogPath, marker: marker}
	for _, d := range st.DataNodes {
		var p DataNodePorts
		if d.DataNode != nil {
			p = *d.DataNode
		}
		c.dnPorts = append(c.dnPorts, p)
		c.dns = append(c.dns, &process{daemon: d.Daemon, pid: d.PID, logPath: d.LogPath, marker: marker})
	}
	return c, nil
}
