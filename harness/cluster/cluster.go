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
	// ErrNoNameNode means a NameNode index is out of range (0 without HA, 0 or 1 with).
	ErrNoNameNode = errors.New("no such namenode")
	// ErrNotHA means an HA operation was asked of a cluster without HA.
	ErrNotHA = errors.New("not an HA cluster")
	// ErrNoDaemon means the cluster has no daemon of that name.
	ErrNoDaemon = errors.New("no such daemon")
	// errPortTaken means a daemon lost a port race with another process; Start retries.
	errPortTaken = errors.New("port taken")
)

// Cluster is a running NameNode (or an HA pair of NameNodes with their JournalNodes,
// ZooKeeper and ZKFCs) and its DataNodes. Its methods are safe for concurrent use.
type Cluster struct {
	cfg  Config
	spec launchSpec
	sp   *spawner // nil when detached or attached
	cds  *cdsState

	mu      sync.Mutex
	nnPorts []NameNodePorts // one, or two with HA
	dnPorts []DataNodePorts
	ha      *HAPorts // nil without HA
	nns     []*process
	dns     []*process
	jns     []*process // HA only
	zk      *process   // HA with automatic failover only
	zkfcs   []*process // HA with automatic failover only
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
	c.cds = planCDS(c.spec, cfg.NoCDS, cfg.BaseDir, c.nameNodeDaemon(0))
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
		SmallHeap:      cfg.SmallHeap,
		Detached:       cfg.Detached,
		FullJIT:        cfg.FullJIT,
		NoCDS:          cfg.NoCDS,
		ClusterName:    cfg.Name,
	}
}

// boot is one attempt of Start: fresh ports, confs, format, launch, wait.
func (c *Cluster) boot(ctx context.Context) error {
	if c.cfg.HA != nil {
		return c.bootHA(ctx)
	}
	cfg := c.cfg
	nnPorts, dnPorts, err := allocatePorts(cfg.DataNodes)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.nnPorts, c.dnPorts = []NameNodePorts{nnPorts}, dnPorts
	c.nns, c.dns = make([]*process, 1), make([]*process, cfg.DataNodes)
	c.mu.Unlock()

	if err := c.prepareNameNode(0); err != nil {
		return err
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
	if err := c.launchNameNode(0); err != nil {
		return err
	}
	for i := range cfg.DataNodes {
		if err := c.launchDataNode(i); err != nil {
			return err
		}
	}
	return c.waitReady(ctx, cfg.DataNodes, true, true)
}

// topo is the cluster's current addresses.
func (c *Cluster) topo() topology {
	c.mu.Lock()
	defer c.mu.Unlock()
	return topology{nns: append([]NameNodePorts(nil), c.nnPorts...), ha: c.ha}
}

// prepareNameNode empties NameNode i's name dir and writes its conf.
func (c *Cluster) prepareNameNode(i int) error {
	dir := nameNodeDir(c.cfg, i)
	if err := os.RemoveAll(filepath.Join(dir, "name")); err != nil {
		return err
	}
	for _, d := range []string{filepath.Join(c.cfg.BaseDir, "tmp"), filepath.Join(dir, "name")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	t := c.topo()
	if err := writeConf(c.confDir(c.nameNodeDaemon(i)), nameNodeCore(c.cfg, t, i), nameNodeSite(c.cfg, t, i)); err != nil {
		return fmt.Errorf("namenode %d conf: %w", i, err)
	}
	return nil
}

func (c *Cluster) writeDataNodeConf(i int) error {
	dir := dataNodeDir(c.cfg, i)
	if err := os.RemoveAll(filepath.Join(dir, "data")); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o700); err != nil {
		return err
	}
	t := c.topo()
	c.mu.Lock()
	dn := c.dnPorts[i]
	c.mu.Unlock()
	if err := writeConf(c.confDir(DataNode(i)), coreSite(c.cfg, t), dataNodeSite(c.cfg, t, i, dn)); err != nil {
		return fmt.Errorf("datanode %d conf: %w", i, err)
	}
	return nil
}

// marker is in the command line of every daemon of this cluster (its conf dir is on the
// classpath) and of no other cluster's.
func (c *Cluster) marker() string { return c.cfg.BaseDir + string(filepath.Separator) }

// canon maps NameNode to HANameNode(0) in an HA cluster.
func (c *Cluster) canon(d Daemon) Daemon {
	if d == NameNode && c.cfg.HA != nil {
		return HANameNode(0)
	}
	return d
}

// nameNodeDaemon is NameNode i's Daemon: NameNode without HA, HANameNode(i) with.
func (c *Cluster) nameNodeDaemon(i int) Daemon {
	if c.cfg.HA != nil {
		return HANameNode(i)
	}
	return NameNode
}

func (c *Cluster) daemonDir(d Daemon) string {
	return filepath.Join(c.cfg.BaseDir, string(c.canon(d)))
}
func (c *Cluster) confDir(d Daemon) string { return filepath.Join(c.daemonDir(d), "conf") }

// LogPath is the file holding daemon d's stdout and stderr.
func (c *Cluster) LogPath(d Daemon) string {
	return filepath.Join(c.daemonDir(d), string(c.canon(d))+".log")
}

// start launches daemon d (a one-off run such as -format when args are given) with its own
// conf dir.
func (c *Cluster) start(d Daemon, args ...string) (*process, error) {
	return c.startWithConf(d, c.confDir(d), args...)
}

// startWithConf launches daemon d with conf dir conf (a ZKFC's is its NameNode's).
func (c *Cluster) startWithConf(d Daemon, conf string, args ...string) (*process, error) {
	d = c.canon(d)
	if err := os.MkdirAll(c.daemonDir(d), 0o755); err != nil {
		return nil, err
	}
	cmd := c.spec.command(d, conf, c.daemonDir(d), c.cdsOptions(d, len(args) > 0), args...)
	cmd.Dir = c.daemonDir(d)
	if d.role() == "zookeeper" {
		cmd.Args = append(cmd.Args, filepath.Join(conf, "zoo.cfg"))
	}
	return startProcess(c.sp, d, cmd, c.LogPath(d), c.marker())
}

// runOnce runs daemon d's one-off command (format, bootstrap) to its end.
func (c *Cluster) runOnce(ctx context.Context, d Daemon, what string, args ...string) error {
	p, err := c.start(d, args...)
	if err != nil {
		return err
	}
	select {
	case <-p.done:
	case <-ctx.Done():
		p.kill()
		return fmt.Errorf("%s: %w", what, ctx.Err())
	}
	if p.err != nil {
		return fmt.Errorf("%s: %w: %v\n%s", what, ErrDaemonExited, p.err, tail(p.logSince(), 30))
	}
	return nil
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

// format runs `NameNode -format` (of NameNode 0; with HA it also formats the JournalNodes)
// and waits for it.
func (c *Cluster) format(ctx context.Context) error {
	return c.runOnce(ctx, c.nameNodeDaemon(0), "format namenode", "-format", "-force", "-nonInteractive", "-clusterid", "newtricks-"+c.cfg.Name)
}

func (c *Cluster) launchNameNode(i int) error {
	p, err := c.start(c.nameNodeDaemon(i))
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.nns[i] = p
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

// waitReady polls until the NameNode (with HA: the active one, and every running standby)
// is out of safe mode with n usable DataNodes. A daemon that dies meanwhile fails the wait
// (with strict, also a NameNode, JournalNode, ZooKeeper or ZKFC; without, stopped NameNodes
// are passed over); with relocate, a DataNode that lost a port race gets fresh ports and is
// restarted.
func (c *Cluster) waitReady(ctx context.Context, n int, relocate, strict bool) error {
	retries := map[int]int{}
	var last error
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		c.mu.Lock()
		nns, dns, stopped := append([]*process(nil), c.nns...), append([]*process(nil), c.dns...), c.stopped
		others := append(append([]*process{c.zk}, c.jns...), c.zkfcs...)
		c.mu.Unlock()
		if stopped {
			return ErrStopped
		}
		up := 0
		for i, nn := range nns {
			if nn.running() {
				up++
				continue
			}
			if !strict && c.cfg.HA != nil {
				continue
			}
			if nn.bindFailed() {
				return fmt.Errorf("namenode %d: %w", i, errPortTaken)
			}
			return fmt.Errorf("namenode %d: %w\n%s", i, ErrDaemonExited, tail(nn.logSince(), 40))
		}
		if up == 0 {
			return fmt.Errorf("namenode: %w", ErrDaemonExited)
		}
		if strict {
			for _, p := range others {
				if p == nil || p.running() {
					continue
				}
				if p.bindFailed() {
					return fmt.Errorf("%s: %w", p.daemon, errPortTaken)
				}
				return fmt.Errorf("%s: %w\n%s", p.daemon, ErrDaemonExited, tail(p.logSince(), 40))
			}
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
		st, err := c.readiness(ctx, n, strict)
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

// readiness is the status waitReady judges: the NameNode's, or with HA the active's, after
// checking that every running standby sees n DataNodes too (and, with strict and automatic
// failover, that its ZKFC has joined the election).
func (c *Cluster) readiness(ctx context.Context, n int, strict bool) (NameNodeStatus, error) {
	if c.cfg.HA == nil {
		return nameNodeStatus(ctx, c.NameNodeHTTPAddr())
	}
	return c.haReadiness(ctx, n, strict)
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
// capacity reported (with HA: on the active NameNode and every running standby).
func (c *Cluster) WaitLive(ctx context.Context, n int) error {
	return c.waitReady(ctx, n, false, false)
}

// Status reads the NameNode's JMX; with HA, the active NameNode's (ErrNotReady while none
// is active).
func (c *Cluster) Status(ctx context.Context) (NameNodeStatus, error) {
	if c.cfg.HA == nil {
		return nameNodeStatus(ctx, c.NameNodeHTTPAddr())
	}
	i, err := c.ActiveNameNode(ctx)
	if err != nil {
		return NameNodeStatus{}, err
	}
	return nameNodeStatus(ctx, c.NameNodes()[i].HTTPAddr)
}

// Name is Config.Name.
func (c *Cluster) Name() string { return c.cfg.Name }

// BaseDir is Config.BaseDir, made absolute.
func (c *Cluster) BaseDir() string { return c.cfg.BaseDir }

// StartupTime is how long Start took from format to ready (0 for an attached cluster).
func (c *Cluster) StartupTime() time.Duration { return c.startup }

// NameNodeAddr is the NameNode RPC address, "127.0.0.1:<port>"; with HA, NameNode 0's
// (NameNodeAddrs has both, ActiveNameNode says which is active).
func (c *Cluster) NameNodeAddr() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.nnPorts) == 0 {
		return "127.0.0.1:0"
	}
	return "127.0.0.1:" + strconv.Itoa(c.nnPorts[0].RPC)
}

// NameNodeAddrs are the RPC addresses of every NameNode, by index: one, or two with HA.
func (c *Cluster) NameNodeAddrs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, len(c.nnPorts))
	for i, p := range c.nnPorts {
		out[i] = "127.0.0.1:" + strconv.Itoa(p.RPC)
	}
	return out
}

// NameNodeHTTPAddr is the NameNode web UI / JMX / WebHDFS address; with HA, NameNode 0's.
func (c *Cluster) NameNodeHTTPAddr() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.nnPorts) == 0 {
		return "127.0.0.1:0"
	}
	return "127.0.0.1:" + strconv.Itoa(c.nnPorts[0].HTTP)
}

// URI is fs.defaultFS: "hdfs://127.0.0.1:<port>", or "hdfs://<nameservice>" with HA (a
// logical name only clients with ClientConfDir's configuration resolve).
func (c *Cluster) URI() string {
	if c.cfg.HA != nil {
		return "hdfs://" + c.cfg.HA.Nameservice
	}
	return "hdfs://" + c.NameNodeAddr()
}

// NameNodePID is the NameNode JVM's pid (also its process group id), 0 if not running;
// with HA, NameNode 0's.
func (c *Cluster) NameNodePID() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.nns) == 0 || !c.nns[0].running() {
		return 0
	}
	return c.nns[0].pid
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
// functions to route through an emulated WAN. With HA they name both NameNodes: the client
// tries them in order and moves to the next on a StandbyException or a failed connection
// (see BUILDING.md for how it behaves across a failover).
func (c *Cluster) ClientOptions(user string) hdfs.ClientOptions {
	return hdfs.ClientOptions{Addresses: c.NameNodeAddrs(), User: user}
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
// and every running DataNode is live again. With HA it restarts the active NameNode: the
// standby takes over (automatically, or by Failover with HAConfig.Manual) and the restarted
// one comes back as the standby.
func (c *Cluster) RestartNameNode(ctx context.Context) error {
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return ErrStopped
	}
	running := 0
	for _, p := range c.dns {
		if p.running() {
			running++
		}
	}
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, c.cfg.StartupTimeout)
	defer cancel()
	if c.cfg.HA != nil {
		return c.restartActive(ctx)
	}
	c.mu.Lock()
	nn := c.nns[0]
	c.mu.Unlock()
	nn.stop(c.cfg.StopGrace)
	if err := c.launchNameNode(0); err != nil {
		return err
	}
	_ = c.writeState()
	if err := c.waitReady(ctx, running, false, false); err != nil {
		return fmt.Errorf("restart namenode: %w", err)
	}
	return nil
}

// daemons lists every daemon of the cluster with its process (nil if never started), in
// start-up order: ZooKeeper, JournalNodes, NameNodes, ZKFCs, DataNodes. Call with c.mu held.
func (c *Cluster) daemons() ([]Daemon, []*process) {
	var ds []Daemon
	var ps []*process
	add := func(d Daemon, p *process) { ds, ps = append(ds, d), append(ps, p) }
	if c.cfg.HA != nil && !c.cfg.HA.Manual {
		add(ZooKeeper, c.zk)
	}
	for i := range c.jns {
		add(JournalNode(i), c.jns[i])
	}
	for i := range c.nns {
		add(c.nameNodeDaemon(i), c.nns[i])
	}
	for i := range c.zkfcs {
		add(ZKFC(i), c.zkfcs[i])
	}
	for i := range c.dnPorts {
		var p *process
		if i < len(c.dns) {
			p = c.dns[i]
		}
		add(DataNode(i), p)
	}
	return ds, ps
}

// Daemons lists every daemon of the cluster, in start-up order.
func (c *Cluster) Daemons() []Daemon {
	c.mu.Lock()
	defer c.mu.Unlock()
	ds, _ := c.daemons()
	return ds
}

func (c *Cluster) process(d Daemon) (*process, error) {
	d = c.canon(d)
	c.mu.Lock()
	defer c.mu.Unlock()
	ds, ps := c.daemons()
	for i := range ds {
		if ds[i] == d {
			if ps[i] == nil {
				return nil, fmt.Errorf("%s: %w", d, ErrDaemonExited)
			}
			return ps[i], nil
		}
	}
	if d.role() == "datanode" {
		return nil, fmt.Errorf("%w: %s", ErrNoDataNode, d)
	}
	return nil, fmt.Errorf("%w: %s", ErrNoDaemon, d)
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
	_, procs := c.daemons()
	// ZKFCs first, so none fails over to a NameNode that is being stopped; the quorum last,
	// so the NameNodes can still write their last edits.
	stages := [][]*process{c.zkfcs, append(append([]*process(nil), c.nns...), c.dns...), append([]*process{c.zk}, c.jns...)}
	c.mu.Unlock()
	for _, stage := range stages {
		var wg sync.WaitGroup
		for _, p := range stage {
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
	}
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
	_, procs := c.daemons()
	c.nns, c.dns, c.jns, c.zk, c.zkfcs = nil, nil, nil, nil, nil
	c.mu.Unlock()
	for _, p := range procs {
		p.kill()
	}
}
