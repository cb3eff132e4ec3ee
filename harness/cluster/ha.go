package cluster

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// HA states of a NameNode, as its JMX (NameNodeStatus.State) and DFSHAAdmin say them.
const (
	StateActive       = "active"
	StateStandby      = "standby"
	StateInitializing = "initializing"
)

// ErrNoActive means no NameNode of an HA cluster is active (wrapped with ErrNotReady).
var ErrNoActive = fmt.Errorf("%w: no active namenode", ErrNotReady)

// ZKFC log lines that say where a ZKFC stands in the election (ZKFailoverController).
const (
	zkfcStandbyLine = "should become standby"
	zkfcActiveLine  = "to active state"
)

// bootHA is one attempt of starting an HA cluster: quorum, format, NameNodes, election.
func (c *Cluster) bootHA(ctx context.Context) error {
	cfg := c.cfg
	ha := cfg.HA
	nnPorts, haPorts, err := allocateHAPorts(ha.Manual)
	if err != nil {
		return err
	}
	_, dnPorts, err := allocatePorts(cfg.DataNodes)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.nnPorts, c.dnPorts, c.ha = nnPorts, dnPorts, haPorts
	c.nns, c.dns, c.jns = make([]*process, haNameNodes), make([]*process, cfg.DataNodes), make([]*process, haJournalNodes)
	if !ha.Manual {
		c.zkfcs = make([]*process, haNameNodes)
	}
	c.mu.Unlock()
	t := c.topo()

	for i := range haNameNodes {
		if err := c.prepareNameNode(i); err != nil {
			return err
		}
		if !ha.Manual {
			if err := writeConf(c.confDir(ZKFC(i)), nameNodeCore(cfg, t, i), nameNodeSite(cfg, t, i)); err != nil {
				return fmt.Errorf("zkfc %d conf: %w", i, err)
			}
		}
	}
	for i := range haJournalNodes {
		dir := filepath.Join(c.daemonDir(JournalNode(i)), "edits")
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := writeConf(c.confDir(JournalNode(i)), coreSite(cfg, t), journalNodeSite(cfg, t, i)); err != nil {
			return fmt.Errorf("journalnode %d conf: %w", i, err)
		}
	}
	for i := range cfg.DataNodes {
		if err := c.writeDataNodeConf(i); err != nil {
			return err
		}
	}
	if err := c.writeClientConf(); err != nil {
		return err
	}

	c.progress(StartStep{Phase: PhaseQuorum, Want: cfg.DataNodes})
	if !ha.Manual {
		if _, err := writeZooKeeperConf(cfg, haPorts.ZooKeeper); err != nil {
			return fmt.Errorf("zookeeper conf: %w", err)
		}
		p, err := c.start(ZooKeeper)
		if err != nil {
			return err
		}
		c.mu.Lock()
		c.zk = p
		c.mu.Unlock()
	}
	for i := range haJournalNodes {
		p, err := c.start(JournalNode(i))
		if err != nil {
			return err
		}
		c.mu.Lock()
		c.jns[i] = p
		c.mu.Unlock()
	}
	// The format writes to every JournalNode; the ZKFC's -formatZK needs ZooKeeper.
	var quorum []portWait
	for i, j := range haPorts.JournalNodes {
		quorum = append(quorum, portWait{c.jns[i], j.RPC})
	}
	if err := waitPorts(ctx, quorum...); err != nil {
		return err
	}

	c.progress(StartStep{Phase: PhaseFormat, Want: cfg.DataNodes})
	var zkErr error
	var zkDone sync.WaitGroup
	if !ha.Manual {
		zkDone.Add(1)
		go func() {
			defer zkDone.Done()
			if zkErr = waitPorts(ctx, portWait{c.zk, haPorts.ZooKeeper}); zkErr != nil {
				return
			}
			zkErr = c.runOnce(ctx, ZKFC(0), "zkfc -formatZK", "-formatZK", "-force", "-nonInteractive")
		}()
	}
	err = c.format(ctx)
	zkDone.Wait()
	if err != nil {
		return err
	}
	if zkErr != nil {
		return zkErr
	}
	if !ha.BootstrapStandby {
		// What MiniDFSCluster does for its HA NameNodes: the standby starts from a copy of
		// the freshly formatted image (same namespace, cluster and block pool ids).
		if err := copyDir(filepath.Join(nameNodeDir(cfg, 0), "name"), filepath.Join(nameNodeDir(cfg, 1), "name")); err != nil {
			return fmt.Errorf("copy the formatted name dir to namenode 1: %w", err)
		}
	}

	c.progress(StartStep{Phase: PhaseLaunch, Want: cfg.DataNodes})
	if err := c.launchNameNode(0); err != nil {
		return err
	}
	if !ha.BootstrapStandby {
		if err := c.launchNameNode(1); err != nil {
			return err
		}
	}
	if !ha.Manual {
		// NameNode 1's ZKFC joins once NameNode 0 is active, so NameNode 0 is always the
		// first active.
		if err := c.launchZKFC(0); err != nil {
			return err
		}
	}
	for i := range cfg.DataNodes {
		if err := c.launchDataNode(i); err != nil {
			return err
		}
	}
	if ha.BootstrapStandby {
		if err := c.bootstrapStandby(ctx); err != nil {
			return err
		}
	}
	c.progress(StartStep{Phase: PhaseElect, Want: cfg.DataNodes})
	if ha.Manual {
		// Each try is a JVM: first wait until NameNode 0 answers.
		if err := c.waitRPC(ctx, 0); err != nil {
			return err
		}
		// --forceactive: without it DFSHAAdmin refuses while it cannot ask NameNode 1 (still
		// starting) whether it is active; it is not, it starts as standby.
		if err := c.retryHAAdmin(ctx, "-transitionToActive", "--forceactive", HANameNodeID(0)); err != nil {
			return err
		}
	}
	if err := c.waitState(ctx, 0, StateActive, true); err != nil {
		return err
	}
	if !ha.Manual {
		if err := c.launchZKFC(1); err != nil {
			return err
		}
	}
	return c.waitReady(ctx, cfg.DataNodes, true, true)
}

// bootstrapStandby runs `NameNode -bootstrapStandby` for NameNode 1 once NameNode 0 answers,
// then starts NameNode 1.
func (c *Cluster) bootstrapStandby(ctx context.Context) error {
	if err := c.waitRPC(ctx, 0); err != nil {
		return err
	}
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		// It fetches the namespace info over RPC and the image over HTTP from NameNode 0; early
		// on either may not answer yet.
		if err = c.runOnce(ctx, HANameNode(1), "bootstrap standby", "-bootstrapStandby", "-force", "-nonInteractive"); err == nil {
			break
		}
		if !sleepCtx(ctx, time.Second) {
			return err
		}
	}
	if err != nil {
		return err
	}
	return c.launchNameNode(1)
}

// waitRPC waits until NameNode i's JMX answers and its RPC port accepts connections.
func (c *Cluster) waitRPC(ctx context.Context, i int) error {
	for {
		c.mu.Lock()
		p, port := c.nns[i], c.nnPorts[i]
		c.mu.Unlock()
		if !p.running() {
			return fmt.Errorf("namenode %d: %w\n%s", i, ErrDaemonExited, tail(p.logSince(), 40))
		}
		if _, err := nameNodeStatus(ctx, "127.0.0.1:"+strconv.Itoa(port.HTTP)); err == nil && dialable(port.RPC) {
			return nil
		}
		if !sleepCtx(ctx, 200*time.Millisecond) {
			return fmt.Errorf("namenode %d rpc: %w", i, ctx.Err())
		}
	}
}

func (c *Cluster) launchZKFC(i int) error {
	p, err := c.start(ZKFC(i))
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.zkfcs[i] = p
	c.mu.Unlock()
	return nil
}

// portWait is a daemon and a port it will listen on.
type portWait struct {
	p    *process
	port int
}

// waitPorts waits until every port accepts a TCP connection, failing when its daemon dies.
func waitPorts(ctx context.Context, ws ...portWait) error {
	for {
		all := true
		for _, w := range ws {
			if !w.p.running() {
				if w.p.bindFailed() {
					return fmt.Errorf("%s: %w", w.p.daemon, errPortTaken)
				}
				return fmt.Errorf("%s: %w\n%s", w.p.daemon, ErrDaemonExited, tail(w.p.logSince(), 40))
			}
			all = all && dialable(w.port)
		}
		if all {
			return nil
		}
		if !sleepCtx(ctx, 100*time.Millisecond) {
			return fmt.Errorf("wait for ports: %w", ctx.Err())
		}
	}
}

func dialable(port int) bool {
	conn, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 500*time.Millisecond)
	if err != nil {
		return false
	}
	conn.Close()
	return true
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// copyDir copies the regular files and directories under src to dst (replacing dst).
func copyDir(src, dst string) error {
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	return filepath.Walk(src, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(to, info.Mode().Perm()|0o700)
		}
		if !info.Mode().IsRegular() || info.Name() == "in_use.lock" {
			return nil
		}
		in, err := os.Open(path)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, info.Mode().Perm())
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}

// haReadiness: exactly one active NameNode, every running standby with n usable DataNodes,
// and with strict and automatic failover, every ZKFC in the election.
func (c *Cluster) haReadiness(ctx context.Context, n int, strict bool) (NameNodeStatus, error) {
	nns := c.NameNodes()
	active := -1
	var st NameNodeStatus
	for _, nn := range nns {
		if !nn.Running {
			continue
		}
		state, err := nameNodeHAState(ctx, nn.HTTPAddr)
		if err != nil {
			return NameNodeStatus{}, fmt.Errorf("namenode %d: %w", nn.Index, err)
		}
		s, err := nameNodeStatus(ctx, nn.HTTPAddr)
		if err != nil {
			return NameNodeStatus{}, fmt.Errorf("namenode %d: %w", nn.Index, err)
		}
		switch state {
		case StateActive:
			if active >= 0 {
				return NameNodeStatus{}, fmt.Errorf("%w: namenodes %d and %d both active", ErrNotReady, active, nn.Index)
			}
			active, st = nn.Index, s
		case StateStandby:
			if !s.Ready(n) {
				return s, fmt.Errorf("%w: standby namenode %d: safemode=%q live=%d want %d", ErrNotReady, nn.Index, s.SafeMode, len(s.LiveNodes), n)
			}
		default:
			return NameNodeStatus{}, fmt.Errorf("%w: namenode %d is %s", ErrNotReady, nn.Index, state)
		}
	}
	if active < 0 {
		return NameNodeStatus{}, ErrNoActive
	}
	if strict && !c.cfg.HA.Manual {
		c.mu.Lock()
		zkfcs := append([]*process(nil), c.zkfcs...)
		c.mu.Unlock()
		for i, z := range zkfcs {
			want := zkfcStandbyLine
			if i == active {
				want = zkfcActiveLine
			}
			if z == nil || !strings.Contains(z.logSince(), want) {
				return st, fmt.Errorf("%w: zkfc %d has not joined the election", ErrNotReady, i)
			}
		}
	}
	return st, nil
}

// NameNodeInfo describes one NameNode.
type NameNodeInfo struct {
	Index  int
	Daemon Daemon
	// ID is the HA id ("nn0", "nn1"); empty without HA.
	ID       string
	Ports    NameNodePorts
	RPCAddr  string // dfs.namenode.rpc-address[.<ns>.<id>]
	HTTPAddr string // web UI, /jmx, WebHDFS
	// PID is the JVM's pid and process group id, 0 if not running.
	PID     int
	Running bool
	NameDir string // dfs.namenode.name.dir
	ConfDir string
	LogPath string
}

// NameNodes describes every NameNode, running or not, by index: one, or two with HA.
func (c *Cluster) NameNodes() []NameNodeInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]NameNodeInfo, len(c.nnPorts))
	for i, p := range c.nnPorts {
		d := c.nameNodeDaemon(i)
		info := NameNodeInfo{
			Index: i, Daemon: d, Ports: p,
			RPCAddr:  "127.0.0.1:" + strconv.Itoa(p.RPC),
			HTTPAddr: "127.0.0.1:" + strconv.Itoa(p.HTTP),
			NameDir:  filepath.Join(nameNodeDir(c.cfg, i), "name"),
			ConfDir:  c.confDir(d),
			LogPath:  c.LogPath(d),
		}
		if c.cfg.HA != nil {
			info.ID = HANameNodeID(i)
		}
		if i < len(c.nns) && c.nns[i].running() {
			info.PID, info.Running = c.nns[i].pid, true
		}
		out[i] = info
	}
	return out
}

// HA reports whether the cluster is an HA nameservice; Nameservice is its id ("" without).
func (c *Cluster) HA() bool { return c.cfg.HA != nil }

// Nameservice is the HA cluster's nameservice id, "" without HA.
func (c *Cluster) Nameservice() string {
	if c.cfg.HA == nil {
		return ""
	}
	return c.cfg.HA.Nameservice
}

// HAPorts are the JournalNode, ZKFC and ZooKeeper ports of an HA cluster (nil without HA).
func (c *Cluster) HAPorts() *HAPorts {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ha == nil {
		return nil
	}
	cp := *c.ha
	return &cp
}

// ZooKeeperAddr is the ZooKeeper quorum (ha.zookeeper.quorum), "" without one.
func (c *Cluster) ZooKeeperAddr() string {
	p := c.HAPorts()
	if p == nil || p.ZooKeeper == 0 {
		return ""
	}
	return "127.0.0.1:" + strconv.Itoa(p.ZooKeeper)
}

// NameNodeState is NameNode i's HA state from its JMX: StateActive, StateStandby or
// StateInitializing ("active" for the NameNode of a cluster without HA).
func (c *Cluster) NameNodeState(ctx context.Context, i int) (string, error) {
	nns := c.NameNodes()
	if i < 0 || i >= len(nns) {
		return "", fmt.Errorf("%w: %d (have %d)", ErrNoNameNode, i, len(nns))
	}
	if !nns[i].Running {
		return "", fmt.Errorf("namenode %d: %w", i, ErrDaemonExited)
	}
	return nameNodeHAState(ctx, nns[i].HTTPAddr)
}

// ActiveNameNode returns the index of the active NameNode (0 without HA), or ErrNoActive
// if none is, or an error wrapping ErrNotReady if both claim to be.
func (c *Cluster) ActiveNameNode(ctx context.Context) (int, error) {
	if c.cfg.HA == nil {
		return 0, nil
	}
	active := -1
	for _, nn := range c.NameNodes() {
		if !nn.Running {
			continue
		}
		if s, err := nameNodeHAState(ctx, nn.HTTPAddr); err == nil && s == StateActive {
			if active >= 0 {
				return -1, fmt.Errorf("%w: namenodes %d and %d both active", ErrNotReady, active, nn.Index)
			}
			active = nn.Index
		}
	}
	if active < 0 {
		return -1, ErrNoActive
	}
	return active, nil
}

// WaitActive waits until exactly one NameNode is active and out of safe mode, and returns
// its index.
func (c *Cluster) WaitActive(ctx context.Context) (int, error) {
	var last error
	for {
		i, err := c.ActiveNameNode(ctx)
		if err == nil {
			var st NameNodeStatus
			if st, err = nameNodeStatus(ctx, c.NameNodes()[i].HTTPAddr); err == nil && st.SafeMode == "" {
				return i, nil
			} else if err == nil {
				err = fmt.Errorf("%w: active namenode %d in safe mode: %s", ErrNotReady, i, st.SafeMode)
			}
		}
		last = err
		if !sleepCtx(ctx, 100*time.Millisecond) {
			return -1, fmt.Errorf("wait for an active namenode: %w (last: %v)", ctx.Err(), last)
		}
	}
}

// deadDaemon returns an error for the first started daemon besides the DataNodes (whose
// port races waitReady handles) that is no longer running.
func (c *Cluster) deadDaemon() error {
	c.mu.Lock()
	ds, ps := c.daemons()
	c.mu.Unlock()
	for i, p := range ps {
		if p == nil || ds[i].role() == "datanode" || p.running() {
			continue
		}
		if p.bindFailed() {
			return fmt.Errorf("%s: %w", ds[i], errPortTaken)
		}
		return fmt.Errorf("%s: %w\n%s", ds[i], ErrDaemonExited, tail(p.logSince(), 40))
	}
	return nil
}

// waitState waits until NameNode i's HA state is want; with strict, its exit fails the wait.
func (c *Cluster) waitState(ctx context.Context, i int, want string, strict bool) error {
	var last error
	for {
		c.mu.Lock()
		p := c.nns[i]
		c.mu.Unlock()
		if strict && !p.running() {
			if p.bindFailed() {
				return fmt.Errorf("namenode %d: %w", i, errPortTaken)
			}
			return fmt.Errorf("namenode %d: %w\n%s", i, ErrDaemonExited, tail(p.logSince(), 40))
		}
		if strict {
			if err := c.deadDaemon(); err != nil {
				return err
			}
		}
		s, err := c.NameNodeState(ctx, i)
		if err == nil && s == want {
			return nil
		}
		last = err
		if err == nil {
			last = fmt.Errorf("state %s", s)
		}
		if !sleepCtx(ctx, 100*time.Millisecond) {
			return fmt.Errorf("wait for namenode %d to be %s: %w (last: %v)", i, want, ctx.Err(), last)
		}
	}
}

func (c *Cluster) nameNodeProc(i int) (*process, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return nil, ErrStopped
	}
	if i < 0 || i >= len(c.nns) {
		return nil, fmt.Errorf("%w: %d (have %d)", ErrNoNameNode, i, len(c.nns))
	}
	return c.nns[i], nil
}

// KillNameNode SIGKILLs NameNode i's process group (the JVM and its co-processes, not its
// ZKFC) and waits until it is gone: with automatic failover the other NameNode's ZKFC makes
// it active within seconds (WaitActive).
func (c *Cluster) KillNameNode(i int) error {
	p, err := c.nameNodeProc(i)
	if err != nil {
		return err
	}
	p.kill()
	return nil
}

// StopNameNode stops NameNode i gracefully (SIGTERM, SIGKILL after Config.StopGrace).
func (c *Cluster) StopNameNode(i int) error {
	p, err := c.nameNodeProc(i)
	if err != nil {
		return err
	}
	p.stop(c.cfg.StopGrace)
	return nil
}

// StartNameNode starts a stopped NameNode i again on its dirs and ports, without formatting,
// and waits until it is up (with HA: in the standby state, its ZKFC back in the election,
// and an active NameNode out of safe mode) with every running DataNode live on it.
func (c *Cluster) StartNameNode(ctx context.Context, i int) error {
	p, err := c.nameNodeProc(i)
	if err != nil {
		return err
	}
	if p.running() {
		return fmt.Errorf("start namenode %d: already running (pid %d)", i, p.pid)
	}
	if err := c.launchNameNode(i); err != nil {
		return err
	}
	_ = c.writeState()
	ctx, cancel := context.WithTimeout(ctx, c.cfg.StartupTimeout)
	defer cancel()
	return c.waitNameNodeBack(ctx, i)
}

func (c *Cluster) waitNameNodeBack(ctx context.Context, i int) error {
	c.mu.Lock()
	running := 0
	for _, p := range c.dns {
		if p.running() {
			running++
		}
	}
	c.mu.Unlock()
	if c.cfg.HA != nil {
		// A NameNode that comes back while the other is active stays standby (its ZKFC sees the
		// lock taken); with Manual it starts as standby anyway.
		if err := c.waitState(ctx, i, StateStandby, true); err != nil {
			if s, _ := c.NameNodeState(ctx, i); s != StateActive {
				return err
			}
		}
	}
	if err := c.waitReady(ctx, running, false, false); err != nil {
		return fmt.Errorf("start namenode %d: %w", i, err)
	}
	return nil
}

// restartActive is RestartNameNode of an HA cluster.
func (c *Cluster) restartActive(ctx context.Context) error {
	i, err := c.WaitActive(ctx)
	if err != nil {
		return err
	}
	other := 1 - i
	if c.cfg.HA.Manual {
		if err := c.Failover(ctx, i, other); err != nil {
			return err
		}
	}
	if err := c.StopNameNode(i); err != nil {
		return err
	}
	if err := c.waitState(ctx, other, StateActive, false); err != nil {
		return fmt.Errorf("restart namenode %d: %w", i, err)
	}
	if err := c.launchNameNode(i); err != nil {
		return err
	}
	_ = c.writeState()
	return c.waitNameNodeBack(ctx, i)
}

// Failover makes NameNode to active in place of from with DFSHAAdmin -failover (through the
// ZKFCs with automatic failover: to's ZKFC asks from's to give up the lock), and waits until
// to is active and out of safe mode and from is standby.
func (c *Cluster) Failover(ctx context.Context, from, to int) error {
	if c.cfg.HA == nil {
		return ErrNotHA
	}
	for _, i := range []int{from, to} {
		if i < 0 || i >= haNameNodes {
			return fmt.Errorf("%w: %d", ErrNoNameNode, i)
		}
	}
	if out, err := c.HAAdmin(ctx, "-failover", HANameNodeID(from), HANameNodeID(to)); err != nil {
		return fmt.Errorf("failover %s -> %s: %w\n%s", HANameNodeID(from), HANameNodeID(to), err, out)
	}
	if err := c.waitState(ctx, to, StateActive, false); err != nil {
		return err
	}
	if err := c.waitState(ctx, from, StateStandby, false); err != nil {
		return err
	}
	_, err := c.WaitActive(ctx)
	return err
}

// retryHAAdmin runs DFSHAAdmin until it succeeds (a NameNode that is still starting refuses
// the call) or ctx ends.
func (c *Cluster) retryHAAdmin(ctx context.Context, args ...string) error {
	var last string
	for {
		out, err := c.HAAdmin(ctx, args...)
		if err == nil {
			return nil
		}
		if ctx.Err() == nil {
			last = out
		}
		if !sleepCtx(ctx, 500*time.Millisecond) {
			return fmt.Errorf("%w; last completed try:\n%s", err, tail(last, 20))
		}
	}
}

// HAAdmin runs `hdfs haadmin` (DFSHAAdmin) with args against the nameservice, e.g.
// "-getServiceState", "nn0", and returns its output. On a Kerberized cluster it runs as the
// NameNodes' principal, logged in from its keytab.
func (c *Cluster) HAAdmin(ctx context.Context, args ...string) (string, error) {
	if c.cfg.HA == nil {
		return "", ErrNotHA
	}
	conf := filepath.Join(c.cfg.BaseDir, "client", "conf")
	dir := filepath.Dir(conf)
	var cmd *exec.Cmd
	class, heap, own := c.spec.daemonJVM(haAdmin)
	cds := c.cdsOptions(haAdmin, true)
	if principal, keytab := c.kerberosLogin(); principal != "" {
		src := filepath.Join(dir, "HAAdminAs.java")
		if err := os.WriteFile(src, []byte(haAdminAsJava), 0o644); err != nil {
			return "", err
		}
		// The source launcher compiles it in memory: the process's classpath has Hadoop.
		cmd = c.spec.commandClass(haAdmin, src, heap, own, conf, dir, cds, append([]string{principal, keytab}, args...)...)
	} else {
		cmd = c.spec.commandClass(haAdmin, class, heap, own, conf, dir, cds, args...)
	}
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	type result struct {
		out []byte
		err error
	}
	done := make(chan result, 1)
	var buf strings.Builder
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Start(); err != nil {
		return "", err
	}
	go func() { done <- result{nil, cmd.Wait()} }()
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		r = <-done
		if r.err == nil {
			r.err = ctx.Err()
		}
	}
	out := buf.String()
	if f, err := os.OpenFile(filepath.Join(dir, "haadmin.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err == nil {
		fmt.Fprintf(f, "=== newtricks %s: haadmin %s: %v\n%s", time.Now().UTC().Format(time.RFC3339), strings.Join(args, " "), exitString(r.err), out)
		f.Close()
	}
	if r.err != nil {
		return out, fmt.Errorf("haadmin %s: %w", strings.Join(args, " "), r.err)
	}
	return out, nil
}

// kerberosLogin is the NameNodes' principal and keytab on a Kerberized cluster, else "",
// from the client conf (so an attached cluster knows it too).
func (c *Cluster) kerberosLogin() (principal, keytab string) {
	core := readSite(filepath.Join(c.ClientConfDir(), "core-site.xml"))
	if core["hadoop.security.authentication"] != "kerberos" {
		return "", ""
	}
	hdfs := readSite(filepath.Join(c.ClientConfDir(), "hdfs-site.xml"))
	return hdfs["dfs.namenode.kerberos.principal"], hdfs["dfs.namenode.keytab.file"]
}

// haAdminAsJava runs DFSHAAdmin as a principal logged in from a keytab: what an admin does
// with kinit first, without a ticket cache (the JDK has no kinit on Linux).
const haAdminAsJava = `import java.security.PrivilegedExceptionAction;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.HdfsConfiguration;
import org.apache.hadoop.hdfs.tools.DFSHAAdmin;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.util.ToolRunner;

public class HAAdminAs {
  public static void main(String[] a) throws Exception {
    Configuration conf = new HdfsConfiguration();
    UserGroupInformation.setConfiguration(conf);
    UserGroupInformation ugi = UserGroupInformation.loginUserFromKeytabAndReturnUGI(a[0], a[1]);
    String[] rest = java.util.Arrays.copyOfRange(a, 2, a.length);
    int rc = ugi.doAs((PrivilegedExceptionAction<Integer>) () -> {
      DFSHAAdmin admin = new DFSHAAdmin();
      admin.setConf(conf);
      return ToolRunner.run(admin, rest);
    });
    System.exit(rc);
  }
}
`

// ClientConfDir is a conf dir (core-site.xml, hdfs-site.xml) for clients of the cluster:
// HADOOP_CONF_DIR for the hadoop tools, or hadoopconf.Load for colinmarc/hdfs
// (hdfs.ClientOptionsFromConf finds both NameNodes of a nameservice in it).
func (c *Cluster) ClientConfDir() string { return filepath.Join(c.cfg.BaseDir, "client", "conf") }

// writeClientConf writes ClientConfDir.
func (c *Cluster) writeClientConf() error {
	t := c.topo()
	if err := writeConf(c.ClientConfDir(), coreSite(c.cfg, t), hdfsCommon(c.cfg, t)); err != nil {
		return fmt.Errorf("client conf: %w", err)
	}
	return nil
}

// KillZKFC SIGKILLs NameNode i's ZKFC (automatic failover only). If it held the active lock,
// ZooKeeper releases it after HAConfig.ZKSessionTimeout and the other ZKFC takes over.
func (c *Cluster) KillZKFC(i int) error {
	p, err := c.zkfcProc(i)
	if err != nil {
		return err
	}
	p.kill()
	return nil
}

// StartZKFC starts a stopped ZKFC i again.
func (c *Cluster) StartZKFC(i int) error {
	p, err := c.zkfcProc(i)
	if err != nil {
		return err
	}
	if p.running() {
		return fmt.Errorf("start zkfc %d: already running (pid %d)", i, p.pid)
	}
	if err := c.launchZKFC(i); err != nil {
		return err
	}
	return c.writeState()
}

func (c *Cluster) zkfcProc(i int) (*process, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return nil, ErrStopped
	}
	if c.cfg.HA == nil || c.cfg.HA.Manual {
		return nil, fmt.Errorf("%w: no ZKFCs (automatic failover is off)", ErrNotHA)
	}
	if i < 0 || i >= len(c.zkfcs) {
		return nil, fmt.Errorf("%w: zkfc %d", ErrNoDaemon, i)
	}
	return c.zkfcs[i], nil
}
