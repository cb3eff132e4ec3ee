// Command nn measures what the newtricks hooks cost the NameNode, and how promptly namespace
// events reach namenode-ext.
//
// Throughput: Hadoop's own NNThroughputBenchmark (hadoop-hdfs tests jar) and a workload of this
// benchmark's own, "clients" (workload.go: several colinmarc/hdfs clients, each its own user,
// creating files half of which lie under the typical mirror prefix, renaming and deleting some,
// and opening a few hot files again and again, so that the typical configuration's
// subscriptions forward and namenode-ext receives events and audit records), run against real
// clusters that differ only in the hooks and in what namenode-ext subscribes to:
//
//   - plain: no hooks (the baseline);
//   - control: a second cluster without hooks, measured exactly like the others: plain vs
//     control is the benchmark's own noise (two identical NameNodes in the same run), the
//     yardstick for every hooked figure;
//   - idle: hooks on (plugin, audit logger, event journal, namenode-ext running), nothing
//     subscribed: the out-of-the-box configuration (reactive hints and mirror are off);
//   - typical: what the shipped subsystems subscribe to when switched on: reactive hints
//     (audited opens, consumed by the real hotspot code, held in the hook until a file was
//     opened K times within W) and one mirror rule's subscription (CLOSE, RENAME, UNLINK,
//     APPEND, TRUNCATE under its source prefix: NNThroughputBenchmark's paths are not under
//     it, half of the clients operation's files are);
//   - worst: every namespace type the subsystems use on every path plus audited opens, so
//     every create forwards two events and every open, rename and delete one.
//
// Only one cluster runs at a time (the others' processes are stopped with SIGSTOP), the order
// rotates every round, and all have the same audit-log settings. Per operation it prints the
// median (min, max) ops/s over the rounds and the NameNode's CPU (JVM + co-process, from /proc
// schedstat, from the operation's start after its input generation to the tool's exit) per
// 1000 ops, and the ratios to plain: per round (a configuration and plain measured in the same
// round, minutes apart at most), median (min, max) over the rounds; a ratio is marked with *
// when it lies outside the range of control's ratios for that operation. Then where each
// configuration's CPU went (per JVM thread group and the co-process, microseconds per op), its
// garbage collections during the operations (from each NameNode's GC log), and each cluster's
// CPU at rest (nothing running against it, every process of the cluster, per thread group).
//
// Event latency: CLOSE at the NameNode (the op's time) to arrival at namenode-ext, P50/P99, on a
// fresh edit-log segment and on one holding -long-edits edits, for the event journal (the
// mechanism the hooks use) and optionally for the inotify poller (the fallback).
//
// The hooks' own CPU per op: the NameNode JVM's newtricks threads (by thread name, schedstat)
// plus the co-process, over the clients operation's timed phase and the drain of the events it
// caused (until namenode-ext's received counters stand still), divided by its operations. Unlike
// ops/s, which swings with whatever else takes the NameNode's CPU, it counts only the hooks'
// work, so it is the headline.
//
// Last line: `BENCH nn-overhead hooks_cpu_us_per_op=<x> audit_per_op=<x> events_per_op=<x>
// min_ratio=<x> cpu_ratio=<x> event_p99_ms=<x> config=<headline> ... mode= rounds= files=
// commit= dirty= load_start= load_end=` where hooks_cpu_us_per_op is the headline
// configuration's (typical unless -headline says otherwise) median over the rounds of the
// hooks' own CPU per op of the clients operation, audit_per_op and events_per_op what
// namenode-ext received per op of it (median of the rounds), min_ratio (the lowest over the
// operations of the median per-round ops/s ratio) and cpu_ratio (the highest median per-round
// CPU-per-op ratio) the headline configuration's, followed by the hooks' CPU and the two ratios
// of every other configuration, control's first (the same statistics between two plain
// clusters: what noise alone gives), and event_p99_ms is the event journal's P99 on the long
// segment (on the fresh one with -long-edits 0). mode=quick marks a -quick run.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/newtricks/newtricks/bench/internal/quick"
	"github.com/newtricks/newtricks/bench/internal/runinfo"
	"github.com/newtricks/newtricks/bench/internal/stats"
	"github.com/newtricks/newtricks/harness/cluster"
	"github.com/newtricks/newtricks/harness/extcluster"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

type options struct {
	ops       []string
	configs   []string
	headline  string
	rounds    int
	warmup    int
	files     int
	threads   int
	audit     bool
	noTop     bool
	longEdits int
	closes    int
	inotify   bool
	jfr       string
	trial     bool
	rest      time.Duration
	pin       bool
	dir       string
	period    time.Duration
	quick     bool
	plot      string   // prefix of the plots' files ("": none)
	load      workload // the "clients" operation
}

// place is where the clusters and the benchmark's client run (set once in run).
var place = placement{clusterCPU: -1, clientCPU: -1}

func main() {
	var o options
	ops := flag.String("ops", "create,mkdirs,open,fileStatus,rename,delete,"+workloadOpName,
		"operations: NNThroughputBenchmark's, and "+workloadOpName+" (this benchmark's workload of many clients: the one whose traffic reaches the co-process, whose hooks' CPU heads the BENCH line)")
	configs := flag.String("configs", "plain,control,idle,typical,worst", "configurations to compare (plain first: the baseline; control: a second plain cluster)")
	flag.StringVar(&o.headline, "headline", "typical", "configuration whose figures head the BENCH line")
	flag.IntVar(&o.rounds, "rounds", 5, "measured rounds per configuration (rotating order), after the warm-up rounds; at least 5")
	flag.IntVar(&o.warmup, "warmup", 1, "warm-up rounds (every JVM's JIT), not counted")
	flag.IntVar(&o.files, "files", 5000, "files (or dirs) per operation")
	flag.DurationVar(&o.rest, "rest", 8*time.Second, "how long each cluster's CPU at rest is measured (0: not)")
	flag.IntVar(&o.threads, "threads", 4, "client threads")
	flag.BoolVar(&o.audit, "audit-log", false, "write the NameNode audit log (FSNamesystem.audit at INFO) on every cluster; off by default")
	flag.BoolVar(&o.noTop, "no-top", false, "dfs.namenode.top.enabled=false on every cluster: with the audit log off, the plain NameNode then skips audit work entirely, exposing the cost of any extra audit logger (isAuditEnabled)")
	flag.IntVar(&o.longEdits, "long-edits", 1_000_000, "edits in the long segment of the event-latency test (0: skip it)")
	flag.IntVar(&o.closes, "closes", 300, "files closed per event-latency measurement")
	flag.BoolVar(&o.inotify, "inotify", false, "also measure event latency with the inotify poller (the fallback), for comparison")
	flag.StringVar(&o.jfr, "jfr", "", "record a JFR profile of every hooked NameNode into this directory")
	flag.StringVar(&o.plot, "plot", "bench-nn", "prefix of the plots of the "+workloadOpName+" operation's rounds: <prefix>-hooks.png (the hooks' own CPU per op) and <prefix>-ratio.png (ops/s ratio to plain); empty: none")
	flag.BoolVar(&o.pin, "pin", true, "run the cluster under test on one CPU and the benchmark client on another (needs 2 CPUs), so the client cannot take the NameNode's CPU")
	flag.StringVar(&o.dir, "dir", "", "directory for the clusters (default: /dev/shm if it is a tmpfs with 4 GiB free, else the temporary directory)")
	flag.DurationVar(&o.period, "sample", 2*time.Millisecond, "how often the NameNode's CPU (cgroup cpuacct) is read while an operation runs")
	flag.BoolVar(&o.trial, "trial", false, "allow fewer than 5 rounds for a look at the figures; prints no BENCH line")
	flag.IntVar(&o.load.clients, "clients", 8, "clients of the "+workloadOpName+" operation, each its own user (8: the reactive hints' default K, so hot files reach K distinct openers)")
	flag.IntVar(&o.load.hot, "hot", 16, "hot files of the "+workloadOpName+" operation, each opened by every client again and again")
	flag.BoolVar(&o.quick, "quick", false, "development run of a few minutes: unless given, -configs plain,typical -ops create,open,"+workloadOpName+
		" -rounds 3 -files 1000 -long-edits 0 -closes 100 -rest 0; prints a BENCH line marked mode=quick (not a result)")
	flag.Parse()
	if o.quick {
		if err := quick.Apply(map[string]string{"configs": "plain,typical", "ops": "create,open," + workloadOpName,
			"rounds": "3", "files": "1000", "long-edits": "0", "closes": "100", "rest": "0"}); err != nil {
			log.Fatal(err)
		}
	}
	o.load.files = o.files
	o.ops = strings.Split(*ops, ",")
	o.configs = strings.Split(*configs, ",")
	if o.rounds < 5 && !o.trial && !o.quick {
		log.Fatalf("-rounds %d: at least 5", o.rounds)
	}
	if o.configs[0] != "plain" {
		log.Fatalf("-configs %s: plain must come first (it is the baseline)", *configs)
	}
	headline := false
	for _, c := range o.configs {
		if _, ok := subscriptions[c]; !ok && !isPlain(c) {
			log.Fatalf("-configs: unknown configuration %q", c)
		}
		headline = headline || (c == o.headline && !isPlain(c))
	}
	if !headline {
		log.Fatalf("-headline %s: not a hooked configuration among -configs %s", o.headline, *configs)
	}
	if !slices.Contains(o.ops, workloadOpName) && !o.trial {
		log.Fatalf("-ops %s: the BENCH line's headline is the hooks' CPU per op of %s; add it or use -trial", *ops, workloadOpName)
	}
	if o.load.clients < 1 || o.load.hot < 1 {
		log.Fatalf("-clients %d -hot %d: at least 1 each", o.load.clients, o.load.hot)
	}
	if err := run(o); err != nil {
		log.Fatal(err)
	}
}

// mirrorPrefix is the source prefix of the typical configuration's mirror subscription: the
// literal prefix of a rule "/mirror-src/{job}/step_{step}" (mirror.InterestOf). The
// NNThroughputBenchmark paths (/nnbench-*) are not under it; half of the files the clients
// operation creates are.
const mirrorPrefix = "/mirror-src/"

// subscriptions are the NameNode keys of each hooked configuration.
var subscriptions = map[string]map[string]string{
	"idle": {},
	// Reactive hints subscribe to audited opens (and the real hotspot code consumes them); a
	// mirror rule subscribes to what engine.Interest lists, under its source prefix.
	"typical": {
		"newtricks.hotspot.reactive":                       "true",
		"newtricks.hotspot.reactive.user":                  "hotspot-svc", // implicit hints' identity (they fire on the clients operation's hot files)
		"newtricks.namenode.ext.events.subscribe":          "CLOSE,RENAME,UNLINK,APPEND,TRUNCATE",
		"newtricks.namenode.ext.events.subscribe.prefixes": mirrorPrefix,
	},
	"worst": {"newtricks.namenode.ext.events.subscribe": "CREATE,CLOSE,RENAME,UNLINK,audit:open"},
}

// isPlain: a configuration without hooks (the baseline and the control).
func isPlain(name string) bool { return name == "plain" || name == "control" }

// describe says what a configuration subscribes to, for the output.
func describe(name string) string {
	switch name {
	case "plain":
		return "no hooks"
	case "control":
		return "no hooks, a second plain cluster: plain vs control is the noise of this benchmark"
	case "idle":
		return "hooks on, nothing subscribed (out of the box: reactive hints and mirror off)"
	case "typical":
		return "reactive hints (audit open, held until K repeats) + a mirror rule's subscription (CLOSE,RENAME,UNLINK,APPEND,TRUNCATE under " + mirrorPrefix + ")"
	case "worst":
		return "CREATE,CLOSE,RENAME,UNLINK on every path + audit open"
	}
	return name
}

// nnPIDs returns the NameNode JVM and its co-processes.
func nnPIDs(c *cluster.Cluster) []int {
	pids := []int{c.NameNodePID()}
	if kids, err := c.Children(cluster.NameNode, ""); err == nil {
		pids = append(pids, kids...)
	}
	return pids
}

// allPIDs returns every process of a cluster (daemons and co-processes).
func allPIDs(c *cluster.Cluster) []int {
	pids := nnPIDs(c)
	for _, dn := range c.DataNodes() {
		if dn.PID == 0 {
			continue
		}
		pids = append(pids, dn.PID)
		if kids, err := c.Children(dn.Daemon, ""); err == nil {
			pids = append(pids, kids...)
		}
	}
	return pids
}

// pause stops (or resumes) every process of a cluster, so only one cluster uses the cores.
func pause(c *cluster.Cluster, stop bool) {
	sig := syscall.SIGCONT
	if stop {
		sig = syscall.SIGSTOP
	}
	for _, pid := range allPIDs(c) {
		_ = syscall.Kill(pid, sig)
	}
}

// threadCPU returns the CPU time (ns, from schedstat) of every thread of the NameNode JVM by
// thread group, and of each co-process as a whole ("co-process <name>").
func threadCPU(pids []int) map[string]int64 {
	out := map[string]int64{}
	for i, pid := range pids {
		if pid == 0 {
			continue
		}
		eachThread(pid, func(dir string, ns int64) {
			var group string
			if i == 0 {
				comm, _ := os.ReadFile(dir + "comm")
				group = threadGroup(strings.TrimSpace(string(comm)))
			} else {
				comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
				group = "co-process " + strings.TrimSpace(string(comm))
			}
			out[group] += ns
		})
	}
	return out
}

// eachThread calls f with the /proc directory ("/proc/<pid>/task/<tid>/") and the CPU time (ns,
// from schedstat) of every thread of pid it can read.
func eachThread(pid int, f func(dir string, ns int64)) {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return
	}
	for _, t := range tasks {
		dir := fmt.Sprintf("/proc/%d/task/%s/", pid, t.Name())
		ss, err := os.ReadFile(dir + "schedstat")
		if err != nil {
			continue
		}
		fs := strings.Fields(string(ss))
		if len(fs) == 0 {
			continue
		}
		ns, _ := strconv.ParseInt(fs[0], 10, 64)
		f(dir, ns)
	}
}

// clusterCPU returns the CPU time (ns) of every process of a cluster: the NameNode's and each
// DataNode's JVM by thread group ("NN ..."/"DN ..."; the newtricks threads one by one) and their
// co-processes.
func clusterCPU(c *cluster.Cluster) map[string]int64 {
	out := map[string]int64{}
	add := func(prefix string, pid int, d cluster.Daemon) {
		for g, ns := range threadCPUDetail([]int{pid}) {
			out[prefix+g] += ns
		}
		if kids, err := c.Children(d, ""); err == nil {
			for _, k := range kids {
				for g, ns := range threadCPU([]int{0, k}) {
					out[prefix+g] += ns
				}
			}
		}
	}
	add("NN ", c.NameNodePID(), cluster.NameNode)
	for _, dn := range c.DataNodes() {
		if dn.PID != 0 {
			add("DN ", dn.PID, dn.Daemon)
		}
	}
	return out
}

// threadCPUDetail is threadCPU of one JVM with the newtricks and gRPC threads by name.
func threadCPUDetail(pids []int) map[string]int64 {
	out := map[string]int64{}
	for _, pid := range pids {
		eachThread(pid, func(dir string, ns int64) {
			comm, _ := os.ReadFile(dir + "comm")
			name := strings.TrimSpace(string(comm))
			g := threadGroup(name)
			if strings.HasPrefix(g, "newtricks") {
				g = "newtricks thread: " + digits.ReplaceAllString(name, "")
			}
			out[g] += ns
		})
	}
	return out
}

var digits = regexp.MustCompile(`[#\s]*[0-9]+$`)

// threadGroup folds a JVM thread name (15 characters in comm) into a group.
func threadGroup(comm string) string {
	switch {
	case strings.HasPrefix(comm, "IPC Server hand"), strings.HasPrefix(comm, "IPC Server Resp"),
		strings.HasPrefix(comm, "IPC Server list"), strings.HasPrefix(comm, "Socket Reader"):
		return "RPC (handlers, readers, responder)"
	case strings.HasPrefix(comm, "C1 Compiler"), strings.HasPrefix(comm, "C2 Compiler"):
		return "JIT compilers"
	case strings.HasPrefix(comm, "GC Thread"), strings.HasPrefix(comm, "G1 "), comm == "VM Thread":
		return "GC and VM thread"
	case strings.HasPrefix(comm, "FSEditLogAsync"), strings.HasPrefix(comm, "FSEditLog"):
		return "edit log (async)"
	case strings.HasPrefix(comm, "newtricks-event"):
		return "newtricks event forwarder"
	case strings.HasPrefix(comm, "newtricks"), strings.HasPrefix(comm, "grpc"), strings.Contains(comm, "epoll"):
		return "newtricks/gRPC other"
	}
	return "other: " + digits.ReplaceAllString(comm, "")
}

func sum(m map[string]int64) int64 {
	var t int64
	for _, v := range m {
		t += v
	}
	return t
}

// log4jFor returns a log4j.properties for the daemons: the harness's console logging, with the
// audit log on or off.
func log4jFor(dir string, audit bool) (string, error) {
	level := "WARN"
	if audit {
		level = "INFO"
	}
	props := "log4j.rootLogger=INFO,console\n" +
		"log4j.threshold=ALL\n" +
		"log4j.appender.console=org.apache.log4j.ConsoleAppender\n" +
		"log4j.appender.console.target=System.err\n" +
		"log4j.appender.console.layout=org.apache.log4j.PatternLayout\n" +
		"log4j.appender.console.layout.ConversionPattern=%d{ISO8601} %p %c{2} [%t]: %m%n\n" +
		"log4j.logger.org.apache.hadoop.util.NativeCodeLoader=ERROR\n" +
		"log4j.logger.BlockStateChange=WARN\n" +
		"log4j.logger.org.apache.hadoop.hdfs.StateChange=WARN\n" +
		"log4j.logger.http.requests=WARN\n" +
		"log4j.logger.org.apache.hadoop.hdfs.server.namenode.FSNamesystem.audit=" + level + "\n"
	path := filepath.Join(dir, "log4j-bench.properties")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	return path, os.WriteFile(path, []byte(props), 0o644)
}

type side struct {
	name  string
	c     *cluster.Cluster
	lay   extcluster.Layout
	gcLog string    // the NameNode's GC log
	meter *cpuMeter // the NameNode group's CPU (nil: no cgroup; CPU to the tool's exit)
}

// settle pins a cluster's processes (again: a co-process may have been restarted) and keeps its
// NameNode group in its meter.
func (s side) settle() error {
	if err := pinProcesses(allPIDs(s.c), place.clusterCPU); err != nil {
		return err
	}
	if s.meter != nil {
		return s.meter.add(nnPIDs(s.c))
	}
	return nil
}

func startCluster(ctx context.Context, a extcluster.Artifacts, base, name string, o extcluster.Options, log4j string, bo options) (side, error) {
	o.Name = name
	o.DataNodes = 1
	// One long segment: no checkpoint-driven roll or auto-roll during the bench (all sides).
	site := map[string]string{
		"dfs.namenode.checkpoint.txns":                        "100000000",
		"dfs.namenode.edit.log.autoroll.multiplier.threshold": "100",
	}
	if bo.noTop {
		site["dfs.namenode.top.enabled"] = "false"
	}
	for k, v := range o.NameNodeSite {
		site[k] = v
	}
	o.NameNodeSite = site
	cfg, lay, err := extcluster.Setup(a, filepath.Join(base, name), o)
	if err != nil {
		return side{}, err
	}
	// The harness limits JIT to C1 for fast test start-up; a throughput benchmark needs the
	// NameNode's steady state.
	cfg.FullJIT = true
	cfg.NameNodeHeap = "1g"
	cfg.JavaOpts = append(cfg.JavaOpts, "-Dlog4j.configuration=file:"+log4j)
	// Every JVM of the cluster logs its collections (one file per pid): the benchmark counts
	// the NameNode's during each measured operation.
	gcDir := filepath.Join(base, name+"-gc")
	if err := os.MkdirAll(gcDir, 0o755); err != nil {
		return side{}, err
	}
	cfg.JavaOpts = append(cfg.JavaOpts, "-Xlog:gc:file="+gcDir+"/gc-%p.log:time")
	if bo.jfr != "" {
		// A directory: each JVM (NameNode, DataNode) writes its own file into it.
		dir := filepath.Join(bo.jfr, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return side{}, err
		}
		cfg.JavaOpts = append(cfg.JavaOpts, "-XX:StartFlightRecording=settings=profile,dumponexit=true,filename="+dir+"/")
	}
	c, err := cluster.Start(ctx, cfg)
	if err != nil {
		return side{}, fmt.Errorf("start %s: %w", name, err)
	}
	s := side{name: name, c: c, lay: lay, gcLog: filepath.Join(gcDir, fmt.Sprintf("gc-%d.log", c.NameNodePID()))}
	if err := s.settle(); err != nil {
		c.Stop()
		return side{}, err
	}
	return s, nil
}

type sample struct {
	ops        float64          // ops/s
	cpuUs      float64          // NameNode CPU (JVM + co-process), microseconds per op
	hooksUs    float64          // of which the hooks' own threads and the co-process (isHooks)
	ext        extCounters      // what namenode-ext received over the window (clients only)
	nops       int              // operations in the window
	parts      map[string]int64 // CPU ns by thread group
	start, end time.Time        // the measured window
}

func run(o options) error {
	a, err := extcluster.ArtifactsFromEnv()
	if err != nil {
		return err
	}
	rinfo := runinfo.Start()
	parent, why := clusterDir(o.dir)
	base, err := os.MkdirTemp(parent, "bench-nn-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(base)
	var pinNote string
	place, pinNote = choosePlacement(o.pin)
	cgRoot, cgErr := cgroupRoot()
	defer removeCgroups(cgRoot)
	if o.jfr != "" {
		if err := os.MkdirAll(o.jfr, 0o755); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Minute)
	defer cancel()
	log4j, err := log4jFor(base, o.audit)
	if err != nil {
		return err
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("bench-nn: audit log %s on every cluster, dfs.namenode.top.enabled=%v; load average at start %s",
		map[bool]string{true: "ON", false: "OFF"}[o.audit], !o.noTop, load)
	for _, name := range o.configs {
		fmt.Printf("  %-8s %s\n", name, describe(name))
	}
	fmt.Printf("clusters in %s (%s); %s\n", base, why, pinNote)
	if cgErr != nil {
		fmt.Printf("NameNode CPU per op from /proc schedstat up to the tool's exit, clean-up included (no cgroup to sample: %v)\n", cgErr)
	} else {
		fmt.Printf("NameNode CPU per op from its cgroup (cpuacct, read every %v) over the tool's timed phase only (its clean-up left out)\n", o.period)
	}

	var sides []side
	defer func() {
		for _, s := range sides {
			pause(s.c, false) // a stopped JVM would not act on SIGTERM
			s.c.Stop()
		}
	}()
	for _, name := range o.configs {
		eo := extcluster.Options{NoHooks: isPlain(name), NameNodeSite: subscriptions[name]}
		s, err := startCluster(ctx, a, base, name, eo, log4j, o)
		if err != nil {
			return err
		}
		sides = append(sides, s)
		if cgErr == nil {
			if s.meter, err = newMeter(cgRoot, name, nnPIDs(s.c)); err != nil {
				return err
			}
			sides[len(sides)-1] = s
		}
		pause(s.c, true)
	}

	// The clients operation's clients run in this process: on the client CPU, like
	// NNThroughputBenchmark (threads made later inherit it; the sampler pins itself there too,
	// and clusters started later are pinned to theirs by settle).
	if place.clientCPU >= 0 {
		if _, err := cluster.PinThreads(os.Getpid(), place.clientCPU); err != nil {
			return fmt.Errorf("pin the benchmark to CPU %d: %w", place.clientCPU, err)
		}
	}
	fmt.Printf("%s: %d clients (users nnload-0..%d), each creating and closing %d empty files (every other one under %s),\n"+
		"renaming a quarter and deleting a quarter of them (half of each under it), then opening %d hot files (1 byte, read) %d times each: %d ops a run\n",
		workloadOpName, o.load.clients, o.load.clients-1, o.load.perClient(), mirrorPrefix, o.load.hot, o.load.opensPer(), o.load.ops())

	res := map[string]map[string][]sample{}
	for _, s := range sides {
		res[s.name] = map[string][]sample{}
	}
	for r := -o.warmup; r < o.rounds; r++ { // rounds < 0 warm up every JVM's JIT and are not counted
		// Rotate the order every round, and reverse it on odd rounds, so no configuration
		// always follows the same one.
		order := make([]side, len(sides))
		for i := range sides {
			order[i] = sides[(i+max(r, 0))%len(sides)]
		}
		if r%2 != 0 {
			for i, j := 0, len(order)-1; i < j; i, j = i+1, j-1 {
				order[i], order[j] = order[j], order[i]
			}
		}
		for _, s := range order {
			pause(s.c, false)
			if err := s.settle(); err != nil {
				return err
			}
			time.Sleep(time.Second) // let the resumed daemons catch up on heartbeats
			for _, op := range o.ops {
				var v float64
				var parts map[string]int64
				var win [2]time.Time
				var windowNs int64
				var ext extCounters
				var err error
				if op == workloadOpName {
					v, parts, win, windowNs, ext, err = clientsRun(ctx, s, o.load, fmt.Sprintf("%d", time.Now().UnixNano()))
				} else {
					v, parts, win, windowNs, err = nnbench(ctx, a, s, log4j, op, o.files, o.threads, o.period)
				}
				if err != nil {
					return fmt.Errorf("%s round %d %s: %w", s.name, r, op, err)
				}
				n := o.opsIn(op)
				x := sample{ops: v, cpuUs: float64(windowNs) / 1e3 / float64(n), hooksUs: float64(hooksNs(parts)) / 1e3 / float64(n),
					ext: ext, nops: n, parts: parts, start: win[0], end: win[1]}
				label := "warm-up "
				if r >= 0 {
					label = fmt.Sprintf("round %d ", r+1)
					res[s.name][op] = append(res[s.name][op], x)
				}
				fmt.Printf("%s %-8s %-11s %10.0f ops/s %8.1f us CPU/op, hooks %6.1f us/op", label, s.name, op, v, x.cpuUs, x.hooksUs)
				if op == workloadOpName && !isPlain(s.name) {
					fmt.Printf(", namenode-ext received %.2f audit + %.2f namespace events/op, %v implicit hints",
						ext.audit/float64(n), ext.namespace/float64(n), ext.triggers)
				}
				fmt.Println()
			}
			pause(s.c, true)
		}
	}

	type summary struct {
		minRatio, cpuRatio float64
		outside            int // operations whose median ratio lies outside control's range
	}
	sums := map[string]summary{}
	window := "from the operation's start (after its input generation) to the tool's exit (incl. its clean-up: one recursive\ndelete), from schedstat"
	if cgErr == nil {
		window = "over the tool's timed phase (its start line to start + its elapsed time; clean-up left out), from the cgroup"
	}
	fmt.Printf("\nNameNode throughput and CPU, median (min, max) of %d rounds after %d warm-up rounds; %d files, %d client threads;\n"+
		"one cluster running at a time, order rotating; CPU: NameNode JVM + co-process per op (us), %s;\n"+
		"ratios to plain per round (same round), median (min, max) over the rounds; * = outside control's range for the operation\n",
		o.rounds, o.warmup, o.files, o.threads, window)
	_, haveControl := res["control"]
	for _, op := range o.ops {
		fmt.Printf("\n%-11s %-8s %24s %24s %26s %26s\n", op, "config", "ops/s med (min,max)", "CPU us/op med (min,max)", "ratio med (min,max)", "cpu ratio med (min,max)")
		p := res["plain"][op]
		var ctlR, ctlC []float64
		if haveControl {
			ctlR, ctlC = paired(res["control"][op], p)
		}
		for _, s := range sides {
			h := res[s.name][op]
			fmt.Printf("%-11s %-8s %8.0f (%6.0f,%6.0f) %8.1f (%6.1f,%6.1f)", "", s.name,
				stats.Median(opsOf(h)), minOf(opsOf(h)), maxOf(opsOf(h)),
				stats.Median(cpuOf(h)), minOf(cpuOf(h)), maxOf(cpuOf(h)))
			if s.name == "plain" {
				fmt.Println()
				continue
			}
			rr, cr := paired(h, p)
			mark := func(v float64, ctl []float64) string {
				if s.name == "control" || len(ctl) == 0 || (v >= minOf(ctl) && v <= maxOf(ctl)) {
					return " "
				}
				return "*"
			}
			mr, mc := stats.Median(rr), stats.Median(cr)
			fmt.Printf(" %7.3f%s (%5.3f,%5.3f) %7.3f%s (%5.3f,%5.3f)\n", mr, mark(mr, ctlR), minOf(rr), maxOf(rr),
				mc, mark(mc, ctlC), minOf(cr), maxOf(cr))
			sm, ok := sums[s.name]
			if !ok {
				sm = summary{minRatio: math.Inf(1)}
			}
			sm.minRatio = math.Min(sm.minRatio, mr)
			sm.cpuRatio = math.Max(sm.cpuRatio, mc)
			if mark(mr, ctlR) == "*" || mark(mc, ctlC) == "*" {
				sm.outside++
			}
			sums[s.name] = sm
		}
	}
	fmt.Printf("\nsummary (min_ratio: lowest median ops/s ratio over the operations; cpu_ratio: highest median CPU-per-op ratio):\n")
	for _, s := range sides {
		if sm, ok := sums[s.name]; ok {
			note := ""
			if s.name == "control" {
				note = "  <- two identical plain clusters: what noise alone gives"
			} else if haveControl {
				note = fmt.Sprintf("  (%d of %d operations outside control's range)", sm.outside, len(o.ops))
			}
			fmt.Printf("  %-8s min_ratio %.3f  cpu_ratio %.3f%s\n", s.name, sm.minRatio, sm.cpuRatio, note)
		}
	}

	// The hooks' own CPU per op: the newtricks threads of the NameNode JVM and the co-process,
	// by thread name (schedstat), over each operation's window.
	fmt.Printf("\nthe hooks' own CPU, us per op (NameNode JVM's newtricks threads + namenode-ext), median (min, max) of the rounds;\n"+
		"%s: over its timed phase and the drain of its events; NNThroughputBenchmark's operations: from their start to the tool's exit:\n", workloadOpName)
	fmt.Printf("%-11s", "op")
	for _, s := range sides {
		fmt.Printf(" %24s", s.name)
	}
	fmt.Println()
	hooksMed := map[string]float64{}
	for _, op := range o.ops {
		fmt.Printf("%-11s", op)
		for _, s := range sides {
			h := hooksOf(res[s.name][op])
			fmt.Printf(" %8.2f (%6.2f,%6.2f)", stats.Median(h), minOf(h), maxOf(h))
			if op == workloadOpName {
				hooksMed[s.name] = stats.Median(h)
			}
		}
		fmt.Println()
	}
	if o.plot != "" && slices.Contains(o.ops, workloadOpName) {
		var names []string
		for _, s := range sides {
			names = append(names, s.name)
		}
		files, err := writePlots(o.plot, workloadOpName, res, names)
		if err != nil {
			return err
		}
		for _, f := range files {
			fmt.Printf("plot: %s\n", f)
		}
	}
	// Where the clients operation's hooks' CPU went, in its median round by hooks' CPU.
	if slices.Contains(o.ops, workloadOpName) {
		fmt.Printf("\n%s: the hooks' CPU by thread group, us per op, in each configuration's median round:\n", workloadOpName)
		for _, s := range sides {
			if isPlain(s.name) {
				continue
			}
			rs := append([]sample(nil), res[s.name][workloadOpName]...)
			sort.Slice(rs, func(i, j int) bool { return rs[i].hooksUs < rs[j].hooksUs })
			if len(rs) == 0 {
				continue
			}
			m := rs[len(rs)/2]
			var gs []string
			for g := range m.parts {
				if isHooks(g) {
					gs = append(gs, g)
				}
			}
			sort.Strings(gs)
			fmt.Printf("  %-8s", s.name)
			for _, g := range gs {
				fmt.Printf(" %s %.2f;", g, float64(m.parts[g])/1e3/float64(m.nops))
			}
			fmt.Println()
		}
	}
	traffic := map[string]extCounters{}
	if slices.Contains(o.ops, workloadOpName) {
		fmt.Printf("\nwhat namenode-ext received during %s's windows (its metrics, exact), per op, median of the rounds:\n", workloadOpName)
		for _, s := range sides {
			if isPlain(s.name) {
				continue
			}
			var au, nsv, tr []float64
			for _, x := range res[s.name][workloadOpName] {
				au = append(au, x.ext.audit/float64(x.nops))
				nsv = append(nsv, x.ext.namespace/float64(x.nops))
				tr = append(tr, x.ext.triggers)
			}
			traffic[s.name] = extCounters{audit: stats.Median(au), namespace: stats.Median(nsv), triggers: stats.Median(tr)}
			fmt.Printf("  %-8s audit records %.3f/op, namespace events %.3f/op, implicit hints fired %.0f a run\n", s.name,
				stats.Median(au), stats.Median(nsv), stats.Median(tr))
		}
	}

	// Garbage collection of each NameNode during the measured operations (its GC log).
	fmt.Printf("\nNameNode garbage collection during the measured operations (all rounds), per 1000 ops:\n")
	fmt.Printf("%-8s %12s %14s %16s %14s %14s\n", "config", "collections", "pause ms", "allocated MB", "live MB (med)", "heap MB (med)")
	for _, s := range sides {
		var wins [][2]time.Time
		var nops float64
		for _, op := range o.ops {
			for _, x := range res[s.name][op] {
				wins = append(wins, [2]time.Time{x.start, x.end})
				nops += float64(x.nops)
			}
		}
		g, err := gcDuring(s.gcLog, wins)
		if err != nil {
			fmt.Printf("%-8s %v\n", s.name, err)
			continue
		}
		k := nops / 1000
		fmt.Printf("%-8s %12.2f %14.2f %16.1f %14.0f %14.0f\n", s.name, float64(g.count)/k, g.pauseMs/k, g.allocMB/k, stats.Median(g.liveMB), stats.Median(g.heapMB))
	}

	// Where the CPU went: per thread group, microseconds per op summed over the operations
	// (each op's median round by total CPU), and the difference to plain.
	fmt.Printf("\nwhere the NameNode's CPU went, us per op (sum over the operations of each one's median round, schedstat from the operation's\nstart to the tool's exit, clean-up included), difference to plain:\n")
	groups := map[string]bool{}
	perGroup := map[string]map[string]float64{}
	for _, s := range sides {
		perGroup[s.name] = map[string]float64{}
		for _, op := range o.ops {
			m := medianSample(res[s.name][op])
			for g, ns := range m.parts {
				perGroup[s.name][g] += float64(ns) / 1e3 / float64(max(m.nops, 1))
				groups[g] = true
			}
		}
	}
	names := make([]string, 0, len(groups))
	for g := range groups {
		names = append(names, g)
	}
	sort.Slice(names, func(i, j int) bool {
		return perGroup[sides[len(sides)-1].name][names[i]] > perGroup[sides[len(sides)-1].name][names[j]]
	})
	fmt.Printf("%-36s", "thread group")
	for _, s := range sides {
		fmt.Printf(" %17s", s.name)
	}
	fmt.Println()
	for _, g := range names {
		fmt.Printf("%-36s", g)
		for _, s := range sides {
			v := perGroup[s.name][g]
			if s.name == "plain" {
				fmt.Printf(" %17.1f", v)
			} else {
				fmt.Printf(" %8.1f (%+6.1f)", v, v-perGroup["plain"][g])
			}
		}
		fmt.Println()
	}
	if o.rest > 0 {
		restCPU(sides, o.rest)
	}
	fmt.Printf("\nthe NameNode hook's counters (JMX NewtricksNameNodeHook) over the whole run, warm-up and every operation included:\n")
	for _, s := range sides {
		pause(s.c, false)
		if !isPlain(s.name) {
			if hc, err := hookCounters(ctx, s.c.NameNodeHTTPAddr()); err != nil {
				fmt.Printf("  %-8s %v\n", s.name, err)
			} else {
				fmt.Printf("  %-8s", s.name)
				for _, k := range hookCounterNames {
					fmt.Printf(" %s=%.0f", k, hc[k])
				}
				fmt.Println()
			}
		}
		if o.jfr != "" {
			f := filepath.Join(o.jfr, s.name, "namenode.jfr")
			if out, err := exec.Command("jcmd", strconv.Itoa(s.c.NameNodePID()), "JFR.dump", "filename="+f).CombinedOutput(); err != nil {
				fmt.Printf("jcmd JFR.dump %s: %v %s\n", s.name, err, out)
			} else {
				fmt.Printf("JFR profile of the %s NameNode: %s\n", s.name, f)
			}
		}
		s.c.Stop()
	}
	sides = nil

	// Event latency, one cluster at a time.
	fmt.Printf("\nevent latency: CLOSE at the NameNode -> delivered to namenode-ext (subscribed to CLOSE under /lat/)\n")
	mechs := []struct {
		name    string
		inotify bool
	}{{"journal", false}}
	if o.inotify {
		mechs = append(mechs, struct {
			name    string
			inotify bool
		}{"inotify", true})
	}
	journalP99 := math.NaN()
	for _, m := range mechs {
		s, err := startCluster(ctx, a, base, "lat-"+m.name, extcluster.Options{InotifyEvents: m.inotify,
			NameNodeSite: map[string]string{
				"newtricks.namenode.ext.events.subscribe":          "CLOSE",
				"newtricks.namenode.ext.events.subscribe.prefixes": "/lat/",
			}}, log4j, options{noTop: o.noTop})
		if err != nil {
			return err
		}
		fresh, err := latency(ctx, a, s, log4j, "fresh", o.closes)
		if err != nil {
			s.c.Stop()
			return err
		}
		fmt.Printf("%-8s fresh segment:            %s\n", m.name, fresh)
		if o.longEdits > 0 {
			start := time.Now()
			if err := longSegment(s, o.longEdits); err != nil {
				s.c.Stop()
				return fmt.Errorf("%s: %d edits: %w", m.name, o.longEdits, err)
			}
			fmt.Printf("%-8s wrote %d edits (mkdirs, not subscribed) into the segment in %v\n", m.name, o.longEdits, time.Since(start).Round(time.Second))
			pids := nnPIDs(s.c)
			before := sum(threadCPU(pids))
			time.Sleep(10 * time.Second)
			idle := sum(threadCPU(pids)) - before
			long, err := latency(ctx, a, s, log4j, "long", o.closes)
			if err != nil {
				s.c.Stop()
				return err
			}
			fmt.Printf("%-8s %d-edit segment:     %s; idle NameNode CPU %.1f%% of a core\n", m.name, o.longEdits, long, float64(idle)/1e7/10)
			if m.name == "journal" {
				journalP99 = long.P99ms()
			}
		} else if m.name == "journal" {
			journalP99 = fresh.P99ms()
		}
		s.c.Stop()
	}
	load, _ = os.ReadFile("/proc/loadavg")
	fmt.Printf("\nload average at the end %s", load)
	head, ok := sums[o.headline]
	if !ok {
		return fmt.Errorf("-headline %s: not among -configs", o.headline)
	}
	mode := "full"
	if o.quick {
		mode = "quick"
	}
	tr := traffic[o.headline]
	line := fmt.Sprintf("BENCH nn-overhead hooks_cpu_us_per_op=%.2f audit_per_op=%.3f events_per_op=%.3f min_ratio=%.3f cpu_ratio=%.3f event_p99_ms=%.0f config=%s",
		hooksMed[o.headline], tr.audit, tr.namespace, head.minRatio, head.cpuRatio, journalP99, o.headline)
	seen := map[string]bool{}
	for _, name := range append([]string{"control"}, o.configs...) {
		if seen[name] {
			continue
		}
		seen[name] = true
		if sm, ok := sums[name]; ok && name != o.headline {
			line += fmt.Sprintf(" %s_hooks_cpu_us_per_op=%.2f %s_min_ratio=%.3f %s_cpu_ratio=%.3f", name, hooksMed[name], name, sm.minRatio, name, sm.cpuRatio)
		}
	}
	line += fmt.Sprintf(" mode=%s rounds=%d files=%d %s", mode, o.rounds, o.files, rinfo.Fields())
	if o.trial {
		fmt.Printf("trial run (%d rounds), not a result: %s\n", o.rounds, line)
		return nil
	}
	fmt.Printf("(hooks_cpu_us_per_op: the hooks' own CPU per op of %s, median of the rounds; audit_per_op, events_per_op: what namenode-ext\n"+
		"received per op of it; min_ratio: the lowest ops/s ratio to plain over the operations; cpu_ratio: the highest CPU-per-op ratio;\n"+
		"config: whose figures lead)\n%s\n", workloadOpName, line)
	return nil
}

// opsIn is how many operations one run of op makes.
func (o options) opsIn(op string) int {
	if op == workloadOpName {
		return o.load.ops()
	}
	return o.files
}

func hooksOf(s []sample) []float64 {
	out := make([]float64, len(s))
	for i, x := range s {
		out[i] = x.hooksUs
	}
	return out
}

func opsOf(s []sample) []float64 {
	out := make([]float64, len(s))
	for i, x := range s {
		out[i] = x.ops
	}
	return out
}

func cpuOf(s []sample) []float64 {
	out := make([]float64, len(s))
	for i, x := range s {
		out[i] = x.cpuUs
	}
	return out
}

// medianSample is the round whose CPU per op is the median.
func medianSample(s []sample) sample {
	c := append([]sample(nil), s...)
	sort.Slice(c, func(i, j int) bool { return c[i].cpuUs < c[j].cpuUs })
	if len(c) == 0 {
		return sample{}
	}
	return c[len(c)/2]
}

// longSegment writes at least n edits into the current segment cheaply: one mkdirs call with
// missing parents logs one edit per directory it creates, so each call of a 900-deep path
// writes 900 edits (HDFS allows 1000 path components).
func longSegment(s side, n int) error {
	me, err := user.Current()
	if err != nil {
		return err
	}
	cl, err := s.c.Client(me.Username)
	if err != nil {
		return err
	}
	defer cl.Close()
	const depth = 900
	deep := strings.Repeat("/d", depth-1)
	for i := 0; i*depth < n; i++ {
		if err := cl.MkdirAll(fmt.Sprintf("/long/%d%s", i, deep), 0o755); err != nil {
			return err
		}
	}
	return nil
}

type lat struct {
	n, want       int
	p50, p99, max float64
}

func (l lat) String() string {
	if l.n < l.want {
		// The missing ones took longer than the wait: percentiles over all are unknown.
		return fmt.Sprintf("only %d of %d CLOSEs arrived within %v: P99 > %v", l.n, l.want, latencyWait, latencyWait)
	}
	return fmt.Sprintf("P50 %6.0f ms  P99 %6.0f ms  max %6.0f ms  (%d CLOSEs)", l.p50, l.p99, l.max, l.n)
}

// P99ms is the P99 in ms, +Inf if not every CLOSE arrived.
func (l lat) P99ms() float64 {
	if l.n < l.want {
		return math.Inf(1)
	}
	return l.p99
}

// latencyWait bounds how long a latency measurement waits for the last CLOSE.
const latencyWait = 5 * time.Minute

// latency rolls the edit log if asked for a fresh segment, closes n files under /lat/ one by one
// (20 ms apart) and returns the delay from each CLOSE's NameNode time to its arrival at
// namenode-ext.
func latency(ctx context.Context, a extcluster.Artifacts, s side, log4j, tag string, n int) (lat, error) {
	if tag == "fresh" {
		if out, err := hadoopTool(ctx, a, s.c, log4j, nil, "org.apache.hadoop.hdfs.tools.DFSAdmin", "-fs", s.c.URI(), "-rollEdits"); err != nil {
			return lat{}, fmt.Errorf("rollEdits: %v\n%s", err, out)
		}
	}
	me, err := user.Current() // the NameNode's user: the HDFS superuser of a harness cluster
	if err != nil {
		return lat{}, err
	}
	cl, err := s.c.Client(me.Username)
	if err != nil {
		return lat{}, err
	}
	defer cl.Close()
	dir := "/lat/" + tag
	if err := cl.MkdirAll(dir, 0o755); err != nil {
		return lat{}, err
	}
	cc, err := extcluster.Dial(s.lay.NameNodeAPI)
	if err != nil {
		return lat{}, err
	}
	defer cc.Close()
	ns := pb.NewNamespaceClient(cc)
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := extcluster.WaitServing(wctx, func(ctx context.Context) error {
		_, err := ns.RecentEvents(ctx, &pb.RecentEventsRequest{Limit: 1})
		return err
	}); err != nil {
		return lat{}, err
	}
	for i := 0; i < n; i++ {
		w, err := cl.Create(fmt.Sprintf("%s/f-%05d", dir, i))
		if err != nil {
			return lat{}, err
		}
		if err := w.Close(); err != nil {
			return lat{}, err
		}
		time.Sleep(20 * time.Millisecond)
	}
	deadline := time.Now().Add(latencyWait)
	for {
		resp, err := ns.RecentEvents(ctx, &pb.RecentEventsRequest{PathPrefix: dir + "/"})
		if err != nil {
			return lat{}, err
		}
		var d []float64
		for _, e := range resp.GetEvents() {
			if r := e.GetNamespace(); r != nil && r.GetType() == "CLOSE" {
				d = append(d, float64(e.GetReceivedMs()-r.GetTimeMs()))
			}
		}
		if len(d) >= n || time.Now().After(deadline) {
			l := lat{n: len(d), want: n}
			if len(d) > 0 {
				sort.Float64s(d)
				l.p50, l.p99, l.max = stats.Pct(d, 50), stats.Pct(d, 99), d[len(d)-1]
			}
			return l, nil
		}
		time.Sleep(200 * time.Millisecond)
	}
}

var (
	statsRE   = regexp.MustCompile(`--- (\w+) stats\s+---`)
	opsRE     = regexp.MustCompile(`Ops per sec:\s*([0-9.]+)`)
	elapsedRE = regexp.MustCompile(`Elapsed Time:\s*([0-9]+)`)
	// NNThroughputBenchmark logs this as the measured operation starts (input generation done).
	startingRE = regexp.MustCompile(`^Starting \d+ (\w+)\(s\)\.`)
)

// nnbench runs one NNThroughputBenchmark operation against s's NameNode and returns ops/s, the
// CPU of the NameNode group by thread group from the start of the measured operation (its
// "Starting N <op>(s)." line, after any input generation) to the tool's exit (which includes its
// clean-up: one recursive delete of its base directory), the window, and the NameNode group's
// CPU in ns over the timed phase alone (from the meter; without one, the same as the thread
// groups' sum).
func nnbench(ctx context.Context, a extcluster.Artifacts, s side, log4j, op string, files, threads int, period time.Duration) (float64, map[string]int64, [2]time.Time, int64, error) {
	var win [2]time.Time
	pids := nnPIDs(s.c)
	args := []string{"-fs", s.c.URI(), "-op", op, "-threads", strconv.Itoa(threads)}
	if op == "mkdirs" {
		args = append(args, "-dirs", strconv.Itoa(files))
	} else {
		args = append(args, "-files", strconv.Itoa(files))
	}
	args = append(args, "-baseDirName", fmt.Sprintf("/nnbench-%d", time.Now().UnixNano()))
	var before map[string]int64
	var smp *sampler
	onLine := func(line string) {
		if m := startingRE.FindStringSubmatch(line); m != nil && strings.EqualFold(m[1], op) && before == nil {
			win[0] = time.Now()
			if s.meter != nil {
				smp = newSampler(s.meter, period, place.clientCPU)
				smp.start()
			}
			before = threadCPU(pids)
		}
	}
	text, err := hadoopTool(ctx, a, s.c, log4j, onLine, "org.apache.hadoop.hdfs.server.namenode.NNThroughputBenchmark", args...)
	after := threadCPU(pids)
	win[1] = time.Now()
	var readings []usageSample
	var smpErr error
	if smp != nil {
		readings, smpErr = smp.stop()
	}
	if err != nil {
		return 0, nil, win, 0, fmt.Errorf("%v\n%s", err, tail(text, 30))
	}
	if before == nil {
		return 0, nil, win, 0, fmt.Errorf("no \"Starting N %s(s).\" line in NNThroughputBenchmark output:\n%s", op, tail(text, 30))
	}
	parts := map[string]int64{}
	for k, ns := range after {
		if d := ns - before[k]; d > 0 {
			parts[k] = d
		}
	}
	ops, elapsedMs, err := opStats(text, op)
	if err != nil {
		return 0, nil, win, 0, err
	}
	if smp == nil {
		return ops, parts, win, sum(parts), nil
	}
	if smpErr != nil {
		return 0, nil, win, 0, fmt.Errorf("reading %s: %w", s.meter.dir, smpErr)
	}
	ns, err := timedCPU(readings, win[0], time.Duration(elapsedMs)*time.Millisecond)
	return ops, parts, win, ns, err
}

// timedCPU is the CPU the readings show over [start, start+elapsed].
func timedCPU(readings []usageSample, start time.Time, elapsed time.Duration) (int64, error) {
	end := start.Add(elapsed)
	if len(readings) < 2 || readings[len(readings)-1].at.Before(end) {
		return 0, fmt.Errorf("CPU readings do not cover the timed phase (%d readings, %v long)", len(readings), elapsed)
	}
	return int64(usageAt(readings, end) - usageAt(readings, start)), nil
}

// opStats reads ops/s and the elapsed time (ms) of op from NNThroughputBenchmark's output.
// Stats are printed per operation; "open", "rename" and "delete" first create their inputs, so
// it takes the block named after op.
func opStats(text, op string) (float64, int64, error) {
	for _, loc := range statsRE.FindAllStringSubmatchIndex(text, -1) {
		if !strings.EqualFold(text[loc[2]:loc[3]], op) {
			continue
		}
		block := text[loc[1]:]
		if next := statsRE.FindStringIndex(block); next != nil {
			block = block[:next[0]]
		}
		m := opsRE.FindStringSubmatch(block)
		e := elapsedRE.FindStringSubmatch(block)
		if m == nil || e == nil {
			break
		}
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			return 0, 0, err
		}
		ms, err := strconv.ParseInt(e[1], 10, 64)
		return v, ms, err
	}
	return 0, 0, fmt.Errorf("no %q stats (ops per sec, elapsed time) in NNThroughputBenchmark output:\n%s", op, tail(text, 30))
}

// hadoopTool runs a Hadoop main class with a console log4j config (NNThroughputBenchmark prints
// its stats through log4j).
func hadoopTool(ctx context.Context, a extcluster.Artifacts, c *cluster.Cluster, log4j string, onLine func(string), class string, args ...string) (string, error) {
	confDir := filepath.Join(filepath.Dir(log4j), "tool-conf")
	if err := os.MkdirAll(confDir, 0o755); err != nil {
		return "", err
	}
	const props = "log4j.rootLogger=INFO,console\n" +
		"log4j.appender.console=org.apache.log4j.ConsoleAppender\n" +
		"log4j.appender.console.layout=org.apache.log4j.PatternLayout\n" +
		"log4j.appender.console.layout.ConversionPattern=%m%n\n"
	if err := os.WriteFile(filepath.Join(confDir, "log4j.properties"), []byte(props), 0o644); err != nil {
		return "", err
	}
	argv := place.clientCommand(append([]string{"java", "-Xmx1g", "-cp", confDir + ":" + a.HadoopLibDir + "/*", class}, args...))
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var out strings.Builder
	w := &lineWriter{out: &out, onLine: onLine}
	cmd.Stdout, cmd.Stderr = w, w
	err := cmd.Run()
	return out.String(), err
}

// lineWriter collects a tool's output and calls onLine with each complete line as it comes.
type lineWriter struct {
	mu     sync.Mutex
	out    *strings.Builder
	part   []byte
	onLine func(string)
}

func (w *lineWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.out.Write(b)
	if w.onLine == nil {
		return len(b), nil
	}
	w.part = append(w.part, b...)
	for {
		i := bytes.IndexByte(w.part, '\n')
		if i < 0 {
			break
		}
		w.onLine(string(w.part[:i]))
		w.part = w.part[i+1:]
	}
	return len(b), nil
}

func minOf(v []float64) float64 {
	m := math.Inf(1)
	for _, x := range v {
		m = math.Min(m, x)
	}
	return m
}

func maxOf(v []float64) float64 {
	m := math.Inf(-1)
	for _, x := range v {
		m = math.Max(m, x)
	}
	return m
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// paired returns, per round, h's ops/s and CPU-per-op ratios to p's in the same round.
func paired(h, p []sample) (ratio, cpu []float64) {
	for i := 0; i < len(h) && i < len(p); i++ {
		ratio = append(ratio, h[i].ops/p[i].ops)
		cpu = append(cpu, h[i].cpuUs/p[i].cpuUs)
	}
	return ratio, cpu
}

type gcStats struct {
	count          int
	pauseMs        float64
	allocMB        float64   // allocated between the previous collection and each one in a window
	liveMB, heapMB []float64 // after each collection in a window, and the heap's size
}

// gcLine is one collection in a -Xlog:gc:...:time log (Serial GC):
// [2026-12-01T14:20:01.123+0000] GC(12) Pause Young (Allocation Failure) 120M->20M(1024M) 5.123ms
var gcLine = regexp.MustCompile(`^\[([^\]]+)\] GC\(\d+\) Pause .* (\d+)M->(\d+)M\((\d+)M\) ([0-9.]+)ms`)

// gcDuring sums the collections logged in path whose time falls in one of the windows.
func gcDuring(path string, wins [][2]time.Time) (gcStats, error) {
	var g gcStats
	b, err := os.ReadFile(path)
	if err != nil {
		return g, err
	}
	prevAfter := 0.0
	for _, line := range strings.Split(string(b), "\n") {
		m := gcLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		t, err := time.Parse("2006-01-02T15:04:05.000-0700", m[1])
		if err != nil {
			continue
		}
		before, _ := strconv.ParseFloat(m[2], 64)
		after, _ := strconv.ParseFloat(m[3], 64)
		heap, _ := strconv.ParseFloat(m[4], 64)
		ms, _ := strconv.ParseFloat(m[5], 64)
		for _, w := range wins {
			if !t.Before(w[0]) && !t.After(w[1]) {
				g.count++
				g.pauseMs += ms
				g.allocMB += math.Max(0, before-prevAfter)
				g.liveMB = append(g.liveMB, after)
				g.heapMB = append(g.heapMB, heap)
				break
			}
		}
		prevAfter = after
	}
	return g, nil
}

// restCPU prints each cluster's CPU at rest: nothing runs against it for d (after the rounds,
// one cluster at a time as in the rounds), every process of the cluster, by thread group.
func restCPU(sides []side, d time.Duration) {
	per := map[string]map[string]float64{}
	groups := map[string]bool{}
	for _, s := range sides {
		pause(s.c, false)
		time.Sleep(2 * time.Second) // heartbeats and timers catch up after SIGCONT
		before := clusterCPU(s.c)
		time.Sleep(d)
		after := clusterCPU(s.c)
		pause(s.c, true)
		per[s.name] = map[string]float64{}
		for g, ns := range after {
			if v := float64(ns-before[g]) / d.Seconds() / 1e6; v > 0 { // ms of CPU per second
				per[s.name][g] = v
				groups[g] = true
			}
		}
	}
	fmt.Printf("\nCPU at rest (nothing running against the cluster, %v each, one at a time), ms of CPU per second (0.1 = 0.01%% of a core):\n", d)
	names := make([]string, 0, len(groups))
	for g := range groups {
		names = append(names, g)
	}
	last := sides[len(sides)-1].name
	sort.Slice(names, func(i, j int) bool { return per[last][names[i]] > per[last][names[j]] })
	fmt.Printf("%-44s", "process / thread group")
	for _, s := range sides {
		fmt.Printf(" %9s", s.name)
	}
	fmt.Println()
	total := map[string]float64{}
	for _, g := range names {
		big := false
		for _, s := range sides {
			big = big || per[s.name][g] >= 0.05
			total[s.name] += per[s.name][g]
		}
		if !big {
			continue
		}
		fmt.Printf("%-44s", g)
		for _, s := range sides {
			fmt.Printf(" %9.2f", per[s.name][g])
		}
		fmt.Println()
	}
	fmt.Printf("%-44s", "total")
	for _, s := range sides {
		fmt.Printf(" %9.2f", total[s.name])
	}
	fmt.Println()
}
