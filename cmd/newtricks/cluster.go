package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/newtricks/newtricks/harness/cluster"
	"github.com/newtricks/newtricks/harness/extcluster"
	"github.com/newtricks/newtricks/internal/progress"
)

func init() {
	register("cluster", command{
		summary: "start, inspect and stop a local HDFS cluster (up | status | down)",
		run:     runCluster,
	})
}

const clusterUsage = `usage:
  newtricks cluster up     [--name dc-a] [--datanodes 3] [--dir DIR] [--conf k=v ...] [--core k=v ...]
                           [--jar hooks.jar [--nn-ext BIN] [--dn-ext BIN]] [--java-opt OPT ...] [--full-jit]
                           [--timeout 90s] [--json] [--secure] [--ha [--ha-manual] [--nameservice ns1]]
  newtricks cluster status [--name dc-a] [--dir DIR] [--json]
  newtricks cluster down   [--name dc-a] [--dir DIR] [--purge]

A cluster is one NameNode and N DataNodes, each a JVM on 127.0.0.1 from the Hadoop jars that
'make hadoop' put in $NEWTRICKS_CACHE/hadoop-` + cluster.HadoopVersion + `/lib. 'up' leaves them
running after it exits and records them in DIR/state.json; DIR defaults to
$NEWTRICKS_CACHE/clusters/NAME ($NEWTRICKS_CACHE defaults to ~/.cache/newtricks).
--jar enables the newtricks hooks; the co-process binaries default to namenode-ext and
datanode-ext next to this executable. 'up' shows its progress on stderr (a bar on a terminal,
plain lines otherwise); with --json, progress is JSON lines on stderr and the result one JSON
object on stdout.
--secure starts a Kerberized cluster: a MiniKdc ('make minikdc') in DIR/kdc with keytabs for
the daemons and the users alice, bob, svc (may act for alice) and admin (supergroup),
kerberos authentication, block tokens, SASL data transfer, HTTPS DataNodes, and TLS with
Kerberos or delegation tokens on the newtricks APIs ('down' stops the KDC too).
--ha starts an HA nameservice instead of one NameNode: two NameNodes (nn0 active, nn1
standby, each with its own namenode-ext with --jar) over three JournalNodes, a ZooKeeper and
a ZKFC per NameNode for automatic failover; --ha-manual leaves out ZooKeeper and the ZKFCs.
Clients use fs.defaultFS hdfs://NAMESERVICE with the conf in DIR/client/conf; fail over by
hand with: HADOOP_CONF_DIR=DIR/client/conf hdfs haadmin -failover nn0 nn1.
`

func runCluster(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usagef("missing subcommand: up, status or down")
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprint(stdout, clusterUsage)
		return nil
	case "up":
		return clusterUp(ctx, args[1:], stdout, stderr)
	case "status":
		return clusterStatus(ctx, args[1:], stdout, stderr)
	case "down":
		return clusterDown(args[1:], stdout, stderr)
	default:
		return usagef("unknown subcommand %q: want up, status or down", args[0])
	}
}

// kvFlags collects repeated k=v flags.
type kvFlags map[string]string

func (f kvFlags) String() string { return fmt.Sprint(map[string]string(f)) }

func (f kvFlags) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("want key=value, got %q", s)
	}
	f[k] = v
	return nil
}

// listFlag collects a repeated flag.
type listFlag []string

func (f *listFlag) String() string     { return strings.Join(*f, " ") }
func (f *listFlag) Set(s string) error { *f = append(*f, s); return nil }

// common flags of every subcommand.
type clusterFlags struct {
	name, dir string
}

func newFlagSet(sub string, stderr io.Writer, cf *clusterFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("newtricks cluster "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, clusterUsage) }
	fs.StringVar(&cf.name, "name", "dc-a", "cluster name")
	fs.StringVar(&cf.dir, "dir", "", "base directory (default $NEWTRICKS_CACHE/clusters/NAME)")
	return fs
}

// parse parses args and turns flag errors into usage errors.
func parse(fs *flag.FlagSet, args []string, cf *clusterFlags) error {
	printUsage := fs.Usage
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printUsage()
			return errSilentOK
		}
		return usagef("%v", err)
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if cf.dir == "" {
		cf.dir = filepath.Join(cluster.DefaultCacheDir(), "clusters", cf.name)
	}
	return nil
}

// errSilentOK ends a command successfully after -h printed the usage.
var errSilentOK = errors.New("help shown")

func clusterUp(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var cf clusterFlags
	hdfsSite, coreSite := kvFlags{}, kvFlags{}
	fs := newFlagSet("up", stderr, &cf)
	n := fs.Int("datanodes", 3, "number of DataNodes (0: NameNode only)")
	fs.Var(hdfsSite, "conf", "hdfs-site.xml `key=value` for every daemon (repeatable)")
	fs.Var(coreSite, "core", "core-site.xml `key=value` for every daemon (repeatable)")
	jar := fs.String("jar", "", "newtricks hooks jar: put it on the classpath and enable the hooks")
	nnExt := fs.String("nn-ext", "", "namenode-ext binary (with --jar)")
	dnExt := fs.String("dn-ext", "", "datanode-ext binary (with --jar)")
	timeout := fs.Duration("timeout", cluster.DefaultStartupTimeout, "startup timeout")
	fullJIT := fs.Bool("full-jit", false, "keep the JVM's C2 JIT (default: C1 only, faster start-up)")
	var javaOpts listFlag
	fs.Var(&javaOpts, "java-opt", "extra JVM `option` for every daemon (repeatable)")
	asJSON := fs.Bool("json", false, "progress as JSON lines on stderr, the result as JSON on stdout")
	secure := fs.Bool("secure", false, "Kerberized cluster: a MiniKdc (make minikdc), keytabs, SASL data transfer, HTTPS DataNodes, TLS public APIs")
	haOn := fs.Bool("ha", false, "HA nameservice: 2 NameNodes, 3 JournalNodes, ZooKeeper and ZKFCs (automatic failover)")
	haManual := fs.Bool("ha-manual", false, "with --ha: no ZooKeeper or ZKFCs, failover only with haadmin")
	nameservice := fs.String("nameservice", cluster.DefaultNameservice, "with --ha: the nameservice id")
	if err := parse(fs, args, &cf); err != nil {
		return okIfHelp(err)
	}
	if *n < 0 {
		return usagef("--datanodes %d: must be >= 0", *n)
	}
	if (*nnExt != "" || *dnExt != "") && *jar == "" {
		return usagef("--nn-ext and --dn-ext need --jar (the hooks that launch them)")
	}
	var ha *cluster.HAConfig
	if *haOn {
		ha = &cluster.HAConfig{Nameservice: *nameservice, Manual: *haManual}
	} else if *haManual || *nameservice != cluster.DefaultNameservice {
		return usagef("--ha-manual and --nameservice need --ha")
	}
	if old, err := cluster.Attach(cf.dir); err == nil {
		if old.Running(cluster.NameNode) || (old.HA() && old.Running(cluster.HANameNode(1))) {
			return fmt.Errorf("cluster %s is already running in %s (namenode pid %d); run `newtricks cluster down --name %s` first",
				cf.name, cf.dir, old.NameNodePID(), cf.name)
		}
		_ = old.Stop() // stale state: make sure nothing of it survives
	}

	cfg := cluster.Config{
		Name:           cf.name,
		DataNodes:      *n,
		NoDataNodes:    *n == 0,
		BaseDir:        cf.dir,
		CoreSite:       coreSite,
		StartupTimeout: *timeout,
		Detached:       true,
		JavaOpts:       javaOpts,
		FullJIT:        *fullJIT,
		HA:             ha,
	}
	var layout *extcluster.Layout
	if *jar != "" {
		abs, err := filepath.Abs(*jar)
		if err != nil {
			return err
		}
		if _, err := os.Stat(abs); err != nil {
			return fmt.Errorf("hooks jar: %w", err)
		}
		a := extcluster.Artifacts{HooksJar: abs, NameNodeExt: siblingBinary("namenode-ext"), DataNodeExt: siblingBinary("datanode-ext")}
		o := extcluster.Options{Name: cf.name, DataNodes: *n, NameNodeExt: absOrEmpty(*nnExt), DataNodeExt: absOrEmpty(*dnExt), HDFSSite: hdfsSite, HA: ha}
		ecfg, lay, err := extcluster.Setup(a, cf.dir, o)
		if err != nil {
			return err
		}
		ecfg.JavaOpts, ecfg.FullJIT = javaOpts, *fullJIT
		ecfg.CoreSite, ecfg.StartupTimeout, ecfg.Detached, ecfg.NoDataNodes, ecfg.HadoopLib = coreSite, *timeout, true, *n == 0, ""
		cfg, layout = ecfg, &lay
	} else {
		cfg.HDFSSite = hdfsSite
	}
	if err := cfg.Validate(); err != nil {
		return usagef("%v", err)
	}
	if err := cluster.CheckRuntime(cfg); err != nil {
		return err
	}
	var sec *cluster.Secure
	if *secure {
		_ = cluster.StopKDC(filepath.Join(cf.dir, "kdc")) // a KDC left by an earlier run
		s, err := cluster.StartSecure(ctx, cf.dir, cfg.Java, true)
		if err != nil {
			return fmt.Errorf("--secure: %w", err)
		}
		sec = s
		sec.Apply(&cfg)
	}

	rep := progress.New(stderr, progress.Options{JSON: *asJSON})
	rep.Printf("starting cluster %s in %s", cf.name, cf.dir)
	task := rep.Task("datanodes live", int64(*n), progress.Count)
	cfg.Progress = startProgress(task)
	c, err := cluster.Start(ctx, cfg)
	if err != nil {
		task.Fail(err)
		rep.Close()
		if sec != nil {
			_ = sec.Stop()
		}
		return err
	}
	task.DoneAt(int64(*n))
	if layout != nil {
		b, _ := json.MarshalIndent(layout, "", "  ")
		_ = os.WriteFile(filepath.Join(cf.dir, "ext.json"), append(b, '\n'), 0o644)
	}
	rep.Close()
	if *asJSON {
		return printJSON(stdout, struct {
			State cluster.State      `json:"state"`
			Ext   *extcluster.Layout `json:"ext,omitempty"`
		}{c.State(), layout})
	}
	fmt.Fprintf(stdout, "cluster %s up in %.1fs\n", c.Name(), c.StartupTime().Seconds())
	printCluster(stdout, c)
	if layout != nil {
		for i := range layout.NameNodeAPIs {
			label := "namenode-ext"
			if c.HA() {
				label = fmt.Sprintf("namenode-ext %d", i)
			}
			fmt.Fprintf(stdout, "  %-17s api %s  metrics http://%s/metrics\n", label, layout.NameNodeAPIs[i], layout.NameNodeMetricsAddrs[i])
		}
		for i := range layout.DataNodeAPI {
			fmt.Fprintf(stdout, "  datanode-ext %d    api %s  metrics http://%s/metrics\n", i, layout.DataNodeAPI[i], layout.DataNodeMetrics[i])
		}
		if c.HA() && sec == nil {
			fmt.Fprintf(stdout, "  clients           newtricks hint list --nameservice %s --conf %s   (or --addr %s)\n",
				c.Nameservice(), c.ClientConfDir(), strings.Join(layout.NameNodeAPIs, ","))
		}
	}
	if sec != nil {
		fmt.Fprintf(stdout, "  kerberos          realm %s, kdc %s (pid file %s), krb5.conf %s\n", cluster.Realm, sec.KDC.Addr,
			filepath.Join(sec.KDC.Dir, "kdc.pid"), sec.KDC.Krb5Conf)
		fmt.Fprintf(stdout, "  keytabs           %s (users %s; %s is the superuser)\n", filepath.Dir(sec.KDC.Keytab("alice")),
			strings.Join(cluster.SecureUsers, ", "), cluster.PrincipalHDFS)
		fmt.Fprintf(stdout, "  public APIs       TLS (CA %s), Kerberos service principal %s\n", sec.CACert, sec.KDC.Principal(cluster.PrincipalNewtricks))
		if layout != nil {
			fmt.Fprintf(stdout, "  try               newtricks hint list --addr %s --ca %s --keytab %s --principal alice --spn %s --krb5-conf %s\n",
				layout.NameNodeAPI, sec.CACert, sec.KDC.Keytab("alice"), cluster.PrincipalNewtricks, sec.KDC.Krb5Conf)
		}
	} else {
		printSimpleWarning(stdout)
	}
	fmt.Fprintf(stdout, "stop it with: newtricks cluster down --name %s%s\n", cf.name, dirFlag(cf))
	return nil
}

// printSimpleWarning says, every time, that a simple-auth cluster trusts claimed names.
func printSimpleWarning(w io.Writer) {
	fmt.Fprintln(w, "  security          SIMPLE authentication: HDFS and the newtricks APIs trust whatever user name a caller claims; use --secure (Kerberos) for anything shared")
}

func okIfHelp(err error) error {
	if errors.Is(err, errSilentOK) {
		return nil
	}
	return err
}

// siblingBinary is name next to the running executable, or "" if there is none.
func siblingBinary(name string) string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	p := filepath.Join(filepath.Dir(exe), name)
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

func absOrEmpty(p string) string {
	if p == "" {
		return ""
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

func dirFlag(cf clusterFlags) string {
	if cf.dir == filepath.Join(cluster.DefaultCacheDir(), "clusters", cf.name) {
		return ""
	}
	return " --dir " + cf.dir
}

func printCluster(w io.Writer, c *cluster.Cluster) {
	fmt.Fprintf(w, "  fs.defaultFS      %s\n", c.URI())
	if c.HA() {
		printHA(w, c)
	} else {
		nnPID := fmt.Sprint(c.NameNodePID())
		if !c.Running(cluster.NameNode) {
			nnPID = "down"
		}
		fmt.Fprintf(w, "  namenode          pid %-7s web http://%s  log %s%s\n", nnPID, c.NameNodeHTTPAddr(), c.LogPath(cluster.NameNode), children(c, cluster.NameNode))
	}
	for _, d := range c.DataNodes() {
		pid := fmt.Sprint(d.PID)
		if !d.Running {
			pid = "down"
		}
		fmt.Fprintf(w, "  datanode %-2d       pid %-7s web http://%s  xfer %s  log %s%s\n", d.Index, pid, d.HTTPAddr, d.XferAddr, d.LogPath, children(c, d.Daemon))
	}
}

// printHA lists an HA cluster's NameNodes with their state, and its quorum and ZKFCs.
func printHA(w io.Writer, c *cluster.Cluster) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	fmt.Fprintf(w, "  client conf       %s (HADOOP_CONF_DIR)\n", c.ClientConfDir())
	for _, nn := range c.NameNodes() {
		pid, state := fmt.Sprint(nn.PID), "down"
		if !nn.Running {
			pid = "down"
		} else if s, err := c.NameNodeState(ctx, nn.Index); err == nil {
			state = s
		} else {
			state = "unreachable"
		}
		fmt.Fprintf(w, "  namenode %d (%s)   pid %-7s %-8s rpc %s  web http://%s  log %s%s\n", nn.Index, nn.ID, pid, state,
			nn.RPCAddr, nn.HTTPAddr, nn.LogPath, children(c, nn.Daemon))
	}
	for _, d := range c.Daemons() {
		switch d {
		case cluster.HANameNode(0), cluster.HANameNode(1):
			continue
		}
		if strings.HasPrefix(string(d), "datanode-") {
			continue
		}
		pid := "down"
		if c.Running(d) {
			pid = "up"
		}
		fmt.Fprintf(w, "  %-17s %-11s log %s\n", d, pid, c.LogPath(d))
	}
	if zk := c.ZooKeeperAddr(); zk != "" {
		fmt.Fprintf(w, "  zookeeper quorum  %s\n", zk)
	}
}

// children lists a daemon's child processes (the co-processes the hooks launched).
func children(c *cluster.Cluster, d cluster.Daemon) string {
	pids, err := c.Children(d, "")
	if err != nil || len(pids) == 0 {
		return ""
	}
	var parts []string
	for _, pid := range pids {
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		parts = append(parts, fmt.Sprintf("%s[%d]", strings.TrimSpace(string(comm)), pid))
	}
	return "  children " + strings.Join(parts, " ")
}

func clusterStatus(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var cf clusterFlags
	fs := newFlagSet("status", stderr, &cf)
	asJSON := fs.Bool("json", false, "print state.json and the NameNode's view as JSON")
	if err := parse(fs, args, &cf); err != nil {
		return okIfHelp(err)
	}
	c, err := cluster.Attach(cf.dir)
	if errors.Is(err, cluster.ErrNoState) {
		fmt.Fprintf(stdout, "cluster %s: not running (no %s in %s)\n", cf.name, cluster.StateFile, cf.dir)
		return errSilent
	}
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	st, jmxErr := c.Status(ctx)
	if *asJSON {
		out := struct {
			State    cluster.State           `json:"state"`
			NameNode *cluster.NameNodeStatus `json:"namenode,omitempty"`
			Error    string                  `json:"error,omitempty"`
		}{State: c.State()}
		if jmxErr == nil {
			out.NameNode = &st
		} else {
			out.Error = jmxErr.Error()
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(stdout, "cluster %s (%s)\n", c.Name(), c.BaseDir())
		printCluster(stdout, c)
		if auth := c.Authentication(); auth == "simple" {
			printSimpleWarning(stdout)
		} else {
			fmt.Fprintf(stdout, "  security          %s authentication\n", auth)
		}
	}
	nnUp := false
	for _, nn := range c.NameNodes() {
		nnUp = nnUp || nn.Running
	}
	healthy := nnUp && jmxErr == nil
	running := 0
	for _, d := range c.DataNodes() {
		if d.Running {
			running++
		}
	}
	if !*asJSON {
		switch {
		case !nnUp:
			fmt.Fprintln(stdout, "  state             namenode not running")
		case jmxErr != nil:
			fmt.Fprintf(stdout, "  state             namenode JMX unreachable: %v\n", jmxErr)
		default:
			sm := "off"
			if st.SafeMode != "" {
				sm = st.SafeMode
			}
			fmt.Fprintf(stdout, "  state             safe mode %s; %d live / %d dead datanodes (%d processes running)\n",
				sm, st.NumLiveDataNodes, st.NumDeadDataNodes, running)
		}
	}
	if !healthy || st.SafeMode != "" || st.NumLiveDataNodes < len(c.DataNodes()) {
		return errSilent
	}
	return nil
}

func clusterDown(args []string, stdout, stderr io.Writer) error {
	var cf clusterFlags
	fs := newFlagSet("down", stderr, &cf)
	purge := fs.Bool("purge", false, "also remove the base directory (data and logs)")
	if err := parse(fs, args, &cf); err != nil {
		return okIfHelp(err)
	}
	c, err := cluster.Attach(cf.dir)
	switch {
	case errors.Is(err, cluster.ErrNoState):
		fmt.Fprintf(stdout, "cluster %s: not running\n", cf.name)
	case err != nil:
		return err
	default:
		if err := c.Stop(); err != nil {
			return err
		}
		removeSocketDir(cf.dir)
		fmt.Fprintf(stdout, "cluster %s: stopped\n", cf.name)
	}
	if err := cluster.StopKDC(filepath.Join(cf.dir, "kdc")); err != nil {
		return fmt.Errorf("stop the KDC of %s: %w", cf.name, err)
	}
	if *purge {
		if err := os.RemoveAll(cf.dir); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "removed %s\n", cf.dir)
	}
	return nil
}

// removeSocketDir removes the co-process socket dir that `up --jar` created outside the
// base dir (unix socket paths must stay short).
func removeSocketDir(dir string) {
	b, err := os.ReadFile(filepath.Join(dir, "ext.json"))
	if err != nil {
		return
	}
	var lay extcluster.Layout
	if json.Unmarshal(b, &lay) == nil && strings.Contains(filepath.Base(lay.SocketDir), "nt-sock-") {
		_ = os.RemoveAll(lay.SocketDir)
	}
	_ = os.Remove(filepath.Join(dir, "ext.json"))
}

// startProgress shows cluster.Start's steps on task: DataNodes live out of those wanted, and
// what the start waits for. The caller marks the task done or failed when Start returns.
func startProgress(task *progress.Task) func(cluster.StartStep) {
	return func(s cluster.StartStep) {
		var status string
		switch {
		case s.Phase == cluster.PhaseQuorum:
			status = "starting ZooKeeper and the JournalNodes"
		case s.Phase == cluster.PhaseFormat:
			status = "formatting the NameNode"
		case s.Phase == cluster.PhaseElect:
			status = "waiting for the first active NameNode"
		case s.Phase == cluster.PhaseLaunch:
			status = "launching the daemons"
		case !s.NameNodeUp:
			status = "waiting for the NameNode"
		case s.SafeMode != "":
			status = "NameNode in safe mode"
		case s.Live >= s.Want:
			return // ready: Start returns and the caller marks the task done
		default:
			status = fmt.Sprintf("waiting for %d of %d DataNodes", s.Want-s.Live, s.Want)
		}
		task.Update(int64(s.Live), status)
	}
}
