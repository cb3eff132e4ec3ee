package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/colinmarc/hdfs/v2"
)

// Sentinel errors; every error of this package that matches one wraps it.
var (
	// ErrNoJava means the java executable was not found.
	ErrNoJava = errors.New("java not found")
	// ErrNoHadoop means Config.HadoopLib holds no Hadoop jars (run `make hadoop`).
	ErrNoHadoop = errors.New("hadoop jars not found")
	// ErrDaemonExited means a daemon died while the harness waited for it.
	ErrDaemonExited = errors.New("daemon exited")
	// ErrStopped means the cluster was stopped.
	ErrStopped = errors.New("cluster stopped")
	// ErrNoDataNode means a DataNode index is out of range.
	ErrNoDataNode = errors.New("no such datanode")
	// errPortTaken means a daemon lost a port race with another process; Start retries.
	errPortTaken = errors.New("port taken")
)

// Cluster is a running NameNode and its DataNodes. Its methods are safe for concurrent use.
type Cluster struct {
	cfg  Config
	spec launchSpec
	sp   *spawner // nil when detached or attached
	cds  *cdsState

	mu      sync.Mutex
	nnPorts NameNodePorts
	dnPorts []DataNodePorts
	nn      *process
	dns     []*process
	stopped bool
	// Startup is how long Start took (format to ready).
	startup   time.Duration
	startedAt time.Time
}

// Start formats a new file system under cfg.BaseDir (removing any previous name and data
// dirs; logs are appended), starts the NameNode and cfg.DataNodes DataNodes, and waits
// until safe mode is off and every DataNode is live, within cfg.StartupTimeout. On error
// nothing is left running.
func Start(ctx context.Context, cfg Config) (*Cluster, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := CheckRuntime(cfg); err != nil {
		return nil, err
	}
	began := time.Now()
	ctx, cancel := context.WithTimeout(ctx, cfg.StartupTimeout)
	defer cancel()
	c := &Cluster{cfg: cfg, spec: specOf(cfg)}
	c.cds = planCDS(c.spec, cfg.NoCDS, cfg.BaseDir)
	if !cfg.Detached {
		c.sp = newSpawner()
	}
	for attempt := 1; ; attempt++ {
		err := c.boot(ctx)
		if err == nil {
			break
		}
		c.killAll()
		if !errors.Is(err, errPortTaken) || attempt == 3 {
			c.Stop()
			return nil, fmt.Errorf("start cluster %s: %w", cfg.Name, err)
		}
	}
	c.startup, c.startedAt = time.Since(began), began.UTC()
	c.startCDSBuild()
	if err := c.writeState(); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// CheckRuntime reports ErrNoJava or ErrNoHadoop if cfg cannot start daemons on this
// machine. Tests use it to skip.
func CheckRuntime(cfg Config) error {
	cfg = cfg.withDefaults()
	if _, err := exec.LookPath(cfg.Java); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrNoJava, cfg.Java, err)
	}
	jar := filepath.Join(cfg.HadoopLib, "hadoop-hdfs-"+HadoopVersion+".jar")
	if _, err := os.Stat(jar); err != nil {
		matches, _ := filepath.Glob(filepath.Join(cfg.HadoopLib, "hadoop-hdfs-3*.jar"))
		if len(matches) == 0 {
			return fmt.Errorf("%w in %s (run `make hadoop`)", ErrNoHadoop, cfg.HadoopLib)
		}
	}
	return nil
}

func specOf(cfg Config) launchSpec {
	return launchSpec{
		Java:           cfg.Java,
		HadoopLib:      cfg.HadoopLib,
		ExtraClasspath: cfg.ExtraClasspath,
		JavaOpts:       cfg.JavaOpts,
		Env:            cfg.Env,
		NameNodeHeap:   cfg.NameNodeHeap,
		DataNodeHeap:   cfg.DataNodeHeap,
		Detached:       cfg.Detached,
		FullJIT:        cfg.FullJIT,
		NoCDS:          cfg.NoCDS,
		ClusterName:    cfg.Name,
	}
}

// boot is one attempt of Start: fresh ports, confs, format, launch, wait.
func (c *Cluster) boot(ctx context.Context) error {
	cfg := c.cfg
	nnPorts, dnPorts, err := allocatePorts(cfg.DataNodes)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.nnPorts, c.dnPorts = nnPorts, dnPorts
	c.dns = make([]*process, cfg.DataNodes)
	c.mu.Unlock()

	if err := os.RemoveAll(filepath.Join(nameNodeDir(cfg), "name")); err != nil {
		return err
	}
	for _, d := range []string{filepath.Join(cfg.BaseDir, "tmp"), filepath.Join(nameNodeDir(cfg), "name")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if err := writeConf(c.confDir(NameNode), coreSite(cfg, nnPorts), nameNodeSite(cfg, nnPorts)); err != nil {
		return fmt.Errorf("namenode conf: %w", err)
	}
	for i := range cfg.DataNodes {
		if err := c.writeDataNodeConf(i); err != nil {
			return err
		}
	}

	c.progress(StartStep{Phase: PhaseFormat, Want: cfg.DataNodes})
	if err := c.format(ctx); err != nil {
		return err
	}
	c.progress(StartStep{Phase: PhaseLaunch, Want: cfg.DataNodes})
	// DataNodes start with the NameNode: they retry until its RPC port answers, and
	// overlapping the JVM start-ups saves most of the wait.
	if err := c.launchNameNode(); err != nil {
		return err
	}
	for i := range cfg.DataNodes {
		if err := c.launchDataNode(i); err != nil {
			return err
		}
	}
	return c.waitReady(ctx, cfg.DataNodes, true)
}

func (c *Cluster) writeDataNodeConf(i int) error {
	dir := dataNodeDir(c.cfg, i)
	if err := os.RemoveAll(filepath.Join(dir, "data")); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o700); err != nil {
		return err
	}
	c.mu.Lock()
	nn, dn := c.nnPorts, c.dnPorts[i]
	c.mu.Unlock()
	if err := writeConf(c.confDir(DataNode(i)), coreSite(c.cfg, nn), dataNodeSite(c.cfg, nn, i, dn)); err != nil {
		return fmt.Errorf("datanode %d conf: %w", i, err)
	}
	return nil
}

// marker is in the command line of every daemon of this cluster (its conf dir is on the
// classpath) and of no other cluster's.
func (c *Cluster) marker() string { return c.cfg.BaseDir + string(filepath.Separator) }

func (c *Cluster) daemonDir(d Daemon) string { return filepath.Join(c.cfg.BaseDir, string(d)) }
func (c *Cluster) confDir(d Daemon) string   { return filepath.Join(c.daemonDir(d), "conf") }

// LogPath is the file holding daemon d's stdout and stderr.
func (c *Cluster) LogPath(d Daemon) string {
	return filepath.Join(c.daemonDir(d), string(d)+".log")
}

func (c *Cluster) start(d Daemon, args ...string) (*process, error) {
	if err := os.MkdirAll(c.daemonDir(d), 0o755); err != nil {
		return nil, err
	}
	cmd := c.spec.command(d, c.confDir(d), c.daemonDir(d), c.cdsOptions(d, len(args) > 0), args...)
	return startProcess(c.sp, d, cmd, c.LogPath(d), c.marker())
}

// cdsOptions are daemon d's class data sharing JVM options: the archive if it exists by
// now, else (not for one-off runs like -format) whatever the plan says to record.
func (c *Cluster) cdsOptions(d Daemon, oneOff bool) []string {
	if c.cds == nil || c.cfg.NoCDS {
		return nil
	}
	archive := c.cds.archive
	if archive == "" {
		archive = c.cds.target
	}
	if archive != "" {
		if _, err := os.Stat(archive); err == nil {
			return []string{"-XX:SharedArchiveFile=" + archive}
		}
	}
	if oneOff {
		return nil
	}
	if c.cds.archive == "" {
		return c.cds.jvmOptions(d)
	}
	return nil
}

// format runs `NameNode -format` and waits for it.
func (c *Cluster) format(ctx context.Context) error {
	p, err := c.start(NameNode, "-format", "-force", "-nonInteractive", "-clusterid", "newtricks-"+c.cfg.Name)
	if err != nil {
		return err
	}
	select {
	case <-p.done:
	case <-ctx.Done():
		p.kill()
		return fmt.Errorf("format namenode: %w", ctx.Err())
	}
	if p.err != nil {
		return fmt.Errorf("format namenode: %w: %v\n%s", ErrDaemonExited, p.err, tail(p.logSince(), 30))
	}
	return nil
}

func (c *Cluster) launchNameNode() error {
	p, err := c.start(NameNode)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.nn = p
	c.mu.Unlock()
	return nil
}

func (c *Cluster) launchDataNode(i int) error {
	p, err := c.start(DataNode(i))
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.dns[i] = p
	c.mu.Unlock()
	return nil
}

// waitReady polls until the NameNode is out of safe mode with n usable DataNodes. A
// daemon that dies meanwhile fails the wait; with relocate, a DataNode that lost a port
// race gets fresh ports and is restarted.
func (c *Cluster) waitReady(ctx context.Context, n int, relocate bool) error {
	retries := map[int]int{}
	var last error
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		c.mu.Lock()
		nn, dns, stopped := c.nn, append([]*process(nil), c.dns...), c.stopped
		c.mu.Unlock()
		if stopped {
			return ErrStopped
		}
		if !nn.running() {
			if nn.bindFailed() {
				return fmt.Errorf("namenode: %w", errPortTaken)
			}
			return fmt.Errorf("namenode: %w\n%s", ErrDaemonExited, tail(nn.logSince(), 40))
		}
		for i, p := range dns {
			if p == nil || p.running() {
				continue
			}
			if relocate && p.bindFailed() && retries[i] < 3 {
				retries[i]++
				if err := c.relocateDataNode(i); err != nil {
					return err
				}
				continue
			}
			return fmt.Errorf("datanode %d: %w\n%s", i, ErrDaemonExited, tail(p.logSince(), 40))
		}
		st, err := nameNodeStatus(ctx, c.NameNodeHTTPAddr())
		c.progress(waitStep(st, err, n))
		if err == nil && st.Ready(n) {
			return nil
		}
		if err != nil {
			last = err
		} else {
			last = fmt.Errorf("%w: safemode=%q live=%d want %d", ErrNotReady, st.SafeMode, len(st.LiveNodes), n)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for namenode and %d datanodes: %w (last: %v)", n, ctx.Err(), last)
		case <-tick.C:
		}
	}
}

// relocateDataNode gives DataNode i fresh ports and starts it again.
func (c *Cluster) relocateDataNode(i int) error {
	p, err := FreePorts(3)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.dnPorts[i] = DataNodePorts{Xfer: p[0], HTTP: p[1], IPC: p[2]}
	c.mu.Unlock()
	if err := c.writeDataNodeConf(i); err != nil {
		return err
	}
	return c.launchDataNode(i)
}

// WaitLive waits until safe mode is off and at least n DataNodes are live with their
// capacity reported.
func (c *Cluster) WaitLive(ctx context.Context, n int) error {
	return c.waitReady(ctx, n, false)
}

// Status reads the NameNode's JMX.
func (c *Cluster) Status(ctx context.Context) (NameNodeStatus, error) {
	return nameNodeStatus(ctx, c.NameNodeHTTPAddr())
}

// Name is Config.Name.
func (c *Cluster) Name() string { return c.cfg.Name }

// BaseDir is Config.BaseDir, made absolute.
func (c *Cluster) BaseDir() string { return c.cfg.BaseDir }

// StartupTime is how long Start took from format to ready (0 for an attached cluster).
func (c *Cluster) StartupTime() time.Duration { return c.startup }

// NameNodeAddr is the NameNode RPC address, "127.0.0.1:<port>".
func (c *Cluster) NameNodeAddr() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return "127.0.0.1:" + strconv.Itoa(c.nnPorts.RPC)
}

// NameNodeHTTPAddr is the NameNode web UI / JMX / WebHDFS address.
func (c *Cluster) NameNodeHTTPAddr() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return "127.0.0.1:" + strconv.Itoa(c.nnPorts.HTTP)
}

// URI is fs.defaultFS, "hdfs://127.0.0.1:<port>".
func (c *Cluster) URI() string { return "hdfs://" + c.NameNodeAddr() }

// NameNodePID is the NameNode JVM's pid (also its process group id), 0 if not running.
func (c *Cluster) NameNodePID() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.nn.running() {
		return 0
	}
	return c.nn.pid
}

// DataNodeInfo describes one DataNode.
type DataNodeInfo struct {
	Index    int
	Daemon   Daemon
	Ports    DataNodePorts
	XferAddr string // dfs.datanode.address
	HTTPAddr string // dfs.datanode.http.address
	IPCAddr  string // dfs.datanode.ipc.address
	// PID is the JVM's pid and process group id, 0 if not running.
	PID     int
	Running bool
	DataDir string // dfs.datanode.data.dir
	ConfDir string // its core-site.xml and hdfs-site.xml
	LogPath string
}

// DataNodes describes every DataNode, running or not, by index.
func (c *Cluster) DataNodes() []DataNodeInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]DataNodeInfo, len(c.dnPorts))
	for i, p := range c.dnPorts {
		d := DataNode(i)
		info := DataNodeInfo{
			Index:    i,
			Daemon:   d,
			Ports:    p,
			XferAddr: "127.0.0.1:" + strconv.Itoa(p.Xfer),
			HTTPAddr: "127.0.0.1:" + strconv.Itoa(p.HTTP),
			IPCAddr:  "127.0.0.1:" + strconv.Itoa(p.IPC),
			DataDir:  filepath.Join(c.daemonDir(d), "data"),
			ConfDir:  c.confDir(d),
			LogPath:  c.LogPath(d),
		}
		if i < len(c.dns) && c.dns[i].running() {
			info.PID, info.Running = c.dns[i].pid, true
		}
		out[i] = info
	}
	return out
}

// ClientOptions are colinmarc/hdfs options for this cluster acting as user; set the dial
// functions to route through an emulated WAN.
func (c *Cluster) ClientOptions(user string) hdfs.ClientOptions {
	return hdfs.ClientOptions{Addresses: []string{c.NameNodeAddr()}, User: user}
}

// Client connects a colinmarc/hdfs client to the NameNode as user (simple auth).
func (c *Cluster) Client(user string) (*hdfs.Client, error) {
	cl, err := hdfs.NewClient(c.ClientOptions(user))
	if err != nil {
		return nil, fmt.Errorf("hdfs client for %s as %s: %w", c.cfg.Name, user, err)
	}
	return cl, nil
}

func (c *Cluster) dataNode(i int) (*process, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return nil, ErrStopped
	}
	if i < 0 || i >= len(c.dnPorts) {
		return nil, fmt.Errorf("%w: %d (have %d)", ErrNoDataNode, i, len(c.dnPorts))
	}
	return c.dns[i], nil
}

// KillDataNode SIGKILLs DataNode i's process group (the JVM and its co-processes) and waits
// until it is gone. The NameNode notices only after its heartbeat recheck (about 14 s with
// the harness defaults); see WaitDataNodeDead.
func (c *Cluster) KillDataNode(i int) error {
	p, err := c.dataNode(i)
	if err != nil {
		return err
	}
	p.kill()
	return nil
}

// StopDataNode stops DataNode i gracefully (SIGTERM, SIGKILL after Config.StopGrace).
func (c *Cluster) StopDataNode(i int) error {
	p, err := c.dataNode(i)
	if err != nil {
		return err
	}
	p.stop(c.cfg.StopGrace)
	return nil
}

// StartDataNode starts DataNode i again with its previous conf, data dir and ports (fresh
// ports if one of them was taken meanwhile), and
// waits until it has registered with the NameNode and is live.
func (c *Cluster) StartDataNode(ctx context.Context, i int) error {
	p, err := c.dataNode(i)
	if err != nil {
		return err
	}
	if p.running() {
		return fmt.Errorf("start datanode %d: already running (pid %d)", i, p.pid)
	}
	if err := c.launchDataNode(i); err != nil {
		return err
	}
	_ = c.writeState()
	ctx, cancel := context.WithTimeout(ctx, c.cfg.StartupTimeout)
	defer cancel()
	dn := c.DataNodes()[i]
	relocations := 0
	for {
		c.mu.Lock()
		p := c.dns[i]
		c.mu.Unlock()
		if !p.running() {
			// Another process may have taken one of its old ports meanwhile: retry on fresh ones
			// (the DataNode keeps its storage, so the NameNode sees the same node come back).
			if p.bindFailed() && relocations < 3 {
				relocations++
				if err := c.relocateDataNode(i); err != nil {
					return err
				}
				_ = c.writeState()
				dn = c.DataNodes()[i]
				continue
			}
			return fmt.Errorf("datanode %d: %w\n%s", i, ErrDaemonExited, tail(p.logSince(), 40))
		}
		if ok, _ := dataNodeRegistered(ctx, dn.HTTPAddr); ok {
			if st, err := c.Status(ctx); err == nil && st.live(dn.XferAddr) {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for datanode %d: %w", i, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (s NameNodeStatus) live(xfer string) bool {
	for _, l := range s.LiveNodes {
		if l.XferAddr == xfer || l.Name == xfer {
			return l.LastContact < 3
		}
	}
	return false
}

// WaitDataNodeDead waits until the NameNode no longer lists DataNode i as live.
func (c *Cluster) WaitDataNodeDead(ctx context.Context, i int) error {
	if _, err := c.dataNode(i); err != nil {
		return err
	}
	xfer := c.DataNodes()[i].XferAddr
	for {
		st, err := c.Status(ctx)
		if err == nil {
			found := false
			for _, l := range st.LiveNodes {
				found = found || l.XferAddr == xfer || l.Name == xfer
			}
			if !found {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for datanode %d dead: %w", i, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// RestartNameNode stops the NameNode (SIGTERM, then SIGKILL after Config.StopGrace), starts
// it again on the same dirs and ports without formatting, and waits until safe mode is off
// and every running DataNode is live again.
func (c *Cluster) RestartNameNode(ctx context.Context) error {
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return ErrStopped
	}
	nn := c.nn
	running := 0
	for _, p := range c.dns {
		if p.running() {
			running++
		}
	}
	c.mu.Unlock()
	nn.stop(c.cfg.StopGrace)
	if err := c.launchNameNode(); err != nil {
		return err
	}
	_ = c.writeState()
	ctx, cancel := context.WithTimeout(ctx, c.cfg.StartupTimeout)
	defer cancel()
	if err := c.waitReady(ctx, running, false); err != nil {
		return fmt.Errorf("restart namenode: %w", err)
	}
	return nil
}

func (c *Cluster) process(d Daemon) (*process, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d == NameNode {
		return c.nn, nil
	}
	for i, p := range c.dns {
		if DataNode(i) == d {
			return p, nil
		}
	}
	return nil, fmt.Errorf("%w: %s", ErrNoDataNode, d)
}

// Children returns the pids of daemon d's descendant processes whose executable base name
// (or argv[0], or comm) is match, e.g. the Go co-process "namenode-ext". An empty match
// returns every descendant.
func (c *Cluster) Children(d Daemon, match string) ([]int, error) {
	p, err := c.process(d)
	if err != nil {
		return nil, err
	}
	if !p.running() {
		return nil, fmt.Errorf("%s: %w", d, ErrDaemonExited)
	}
	var pids []int
	for _, k := range descendants(p.pid) {
		if matchesExe(k, match) {
			pids = append(pids, k.pid)
		}
	}
	return pids, nil
}

// KillChildren SIGKILLs daemon d's descendants matching match (see Children) and returns
// their pids. It does not wait for the daemon to notice.
func (c *Cluster) KillChildren(d Daemon, match string) ([]int, error) {
	pids, err := c.Children(d, match)
	if err != nil {
		return nil, err
	}
	for _, pid := range pids {
		_ = syscallKill(pid)
	}
	return pids, nil
}

// Running reports whether daemon d's JVM is alive.
func (c *Cluster) Running(d Daemon) bool {
	p, err := c.process(d)
	return err == nil && p.running()
}

// Stop stops every daemon (SIGTERM, SIGKILL of the whole process group after
// Config.StopGrace), waits until they are gone, and releases the spawner thread. It is
// idempotent and safe to call from t.Cleanup and defers.
func (c *Cluster) Stop() error {
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return nil
	}
	c.stopped = true
	procs := append([]*process{c.nn}, c.dns...)
	c.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range procs {
		if p == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.stop(c.cfg.StopGrace)
		}()
	}
	wg.Wait()
	c.mu.Lock()
	var builder *process
	if c.cds != nil {
		builder = c.cds.builder
	}
	c.mu.Unlock()
	if builder != nil {
		// Let a class archive dump finish (once per machine and Hadoop version): killing it
		// would only make the next cluster record and dump again.
		builder.waitExit(2 * time.Minute)
		builder.kill()
	}
	if c.sp != nil {
		c.sp.close()
	}
	var left []int
	for _, p := range procs {
		if p != nil && groupAlive(p.pid) {
			left = append(left, p.pid)
		}
	}
	_ = os.Remove(c.statePath())
	if len(left) > 0 {
		return fmt.Errorf("stop cluster %s: process groups still alive: %v", c.cfg.Name, left)
	}
	return nil
}

// killAll SIGKILLs every daemon without marking the cluster stopped (between Start
// attempts).
func (c *Cluster) killAll() {
	c.mu.Lock()
	procs := append([]*process{c.nn}, c.dns...)
	c.nn, c.dns = nil, nil
	c.mu.Unlock()
	for _, p := range procs {
		p.kill()
	}
}
