// Command nn measures what the newtricks hooks cost the NameNode, and how promptly namespace
// events reach namenode-ext.
//
// Throughput: Hadoop's own NNThroughputBenchmark (hadoop-hdfs tests jar) runs against two real
// clusters, one plain and one with the hooks and namenode-ext subscribed to every namespace event
// type the subsystems use and to audited opens. Only one cluster runs at a time (the other's
// processes are stopped with SIGSTOP), the order alternates every round, and both have the same
// audit-log settings. Per operation it prints the median (min, max) ops/s over the rounds, the
// ratio hooks/plain, and the NameNode's CPU (JVM + co-process) per 1000 ops.
//
// Event latency: CLOSE at the NameNode (the op's time) to arrival at namenode-ext, P50/P99, on a
// fresh edit-log segment and on one holding -long-edits edits, for the event journal (the
// mechanism the hooks use) and for the inotify poller (the fallback), one cluster at a time.
//
// Last line: `BENCH nn-overhead min_ratio=<x> cpu_ratio=<x> event_p99_ms=<x>` (event_p99_ms: the
// event journal's P99 on the long segment).
package main

import (
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
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/newtricks/newtricks/internal/cluster"
	"github.com/newtricks/newtricks/internal/exttest"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

type options struct {
	ops       []string
	rounds    int
	files     int
	threads   int
	audit     bool
	longEdits int
	closes    int
	inotify   bool
}

func main() {
	var o options
	ops := flag.String("ops", "create,mkdirs,open,fileStatus,rename,delete", "NNThroughputBenchmark operations")
	flag.IntVar(&o.rounds, "rounds", 5, "measured rounds per cluster (alternating order), after one warm-up round; at least 5")
	flag.IntVar(&o.files, "files", 4000, "files (or dirs) per operation")
	flag.IntVar(&o.threads, "threads", 4, "client threads")
	flag.BoolVar(&o.audit, "audit-log", false, "write the NameNode audit log (FSNamesystem.audit at INFO) on both clusters; off by default, which also exposes any cost the extra audit logger adds")
	flag.IntVar(&o.longEdits, "long-edits", 1_000_000, "edits in the long segment of the event-latency test (0: skip it)")
	flag.IntVar(&o.closes, "closes", 300, "files closed per event-latency measurement")
	flag.BoolVar(&o.inotify, "inotify", true, "also measure event latency with the inotify poller (the fallback), for comparison")
	flag.Parse()
	o.ops = strings.Split(*ops, ",")
	if o.rounds < 5 {
		log.Fatalf("-rounds %d: at least 5", o.rounds)
	}
	if err := run(o); err != nil {
		log.Fatal(err)
	}
}

// subscription is what namenode-ext subscribes to in the throughput rounds: every namespace
// event type the subsystems consume, on every path, plus audited opens (reactive hints).
const subscription = "CREATE,CLOSE,RENAME,UNLINK,audit:open"

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

// cpuTicks returns the CPU time (user+system, clock ticks) of pids.
func cpuTicks(pids []int) int64 {
	var total int64
	for _, pid := range pids {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
		u, _ := strconv.ParseInt(f[11], 10, 64)
		s, _ := strconv.ParseInt(f[12], 10, 64)
		total += u + s
	}
	return total
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
	name string
	c    *cluster.Cluster
	lay  exttest.Layout
}

func startCluster(ctx context.Context, a exttest.Artifacts, base, name string, o exttest.Options, log4j string) (side, error) {
	o.Name = name
	o.DataNodes = 1
	// One long segment: no checkpoint-driven roll or auto-roll during the bench (both sides).
	site := map[string]string{
		"dfs.namenode.checkpoint.txns":                        "100000000",
		"dfs.namenode.edit.log.autoroll.multiplier.threshold": "100",
	}
	for k, v := range o.NameNodeSite {
		site[k] = v
	}
	o.NameNodeSite = site
	cfg, lay, err := exttest.Setup(a, filepath.Join(base, name), o)
	if err != nil {
		return side{}, err
	}
	// The harness limits JIT to C1 for fast test start-up; a throughput benchmark needs the
	// NameNode's steady state.
	cfg.FullJIT = true
	cfg.NameNodeHeap = "1g"
	cfg.JavaOpts = append(cfg.JavaOpts, "-Dlog4j.configuration=file:"+log4j)
	c, err := cluster.Start(ctx, cfg)
	if err != nil {
		return side{}, fmt.Errorf("start %s: %w", name, err)
	}
	return side{name: name, c: c, lay: lay}, nil
}

func run(o options) error {
	a, err := exttest.ArtifactsFromEnv()
	if err != nil {
		return err
	}
	base, err := os.MkdirTemp("", "bench-nn-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(base)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Minute)
	defer cancel()
	log4j, err := log4jFor(base, o.audit)
	if err != nil {
		return err
	}
	fmt.Printf("audit log %s on both clusters; hooks cluster subscribes to %s (event journal)\n",
		map[bool]string{true: "ON", false: "OFF"}[o.audit], subscription)

	plain, err := startCluster(ctx, a, base, "plain", exttest.Options{NoHooks: true}, log4j)
	if err != nil {
		return err
	}
	defer plain.c.Stop()
	pause(plain.c, true)
	hooks, err := startCluster(ctx, a, base, "hooks", exttest.Options{
		NameNodeSite: map[string]string{"newtricks.namenode.ext.events.subscribe": subscription}}, log4j)
	if err != nil {
		return err
	}
	defer hooks.c.Stop()
	pause(hooks.c, true)

	res := map[string]map[string][]float64{"plain": {}, "hooks": {}}
	cpu := map[string]map[string][]float64{"plain": {}, "hooks": {}}
	for r := -1; r < o.rounds; r++ { // round -1 warms up both JVMs' JIT and is not counted
		order := []side{plain, hooks}
		if r%2 != 0 {
			order = []side{hooks, plain}
		}
		for _, s := range order {
			pause(s.c, false)
			time.Sleep(time.Second) // let the resumed daemons catch up on heartbeats
			for _, op := range o.ops {
				pids := nnPIDs(s.c)
				before := cpuTicks(pids)
				v, err := nnbench(ctx, a, s.c, log4j, op, o.files, o.threads)
				if err != nil {
					return fmt.Errorf("%s round %d %s: %w", s.name, r, op, err)
				}
				ticks := float64(cpuTicks(pids)-before) * 1000 / float64(o.files)
				if r < 0 {
					fmt.Printf("warm-up  %-6s %-11s %10.0f ops/s\n", s.name, op, v)
					continue
				}
				res[s.name][op] = append(res[s.name][op], v)
				cpu[s.name][op] = append(cpu[s.name][op], ticks)
				fmt.Printf("round %d  %-6s %-11s %10.0f ops/s %8.1f NameNode CPU ticks/1000 ops\n", r+1, s.name, op, v, ticks)
			}
			pause(s.c, true)
		}
	}
	fmt.Printf("\n%-11s %26s %26s %7s %14s %14s %9s\n", "operation", "plain ops/s med (min,max)", "hooks ops/s med (min,max)", "ratio", "plain cpu/kop", "hooks cpu/kop", "cpu ratio")
	minRatio, cpuRatio := math.Inf(1), 0.0
	for _, op := range o.ops {
		p, h := res["plain"][op], res["hooks"][op]
		ratio := median(h) / median(p)
		cr := median(cpu["hooks"][op]) / median(cpu["plain"][op])
		fmt.Printf("%-11s %10.0f (%6.0f,%6.0f) %10.0f (%6.0f,%6.0f) %7.3f %14.1f %14.1f %9.3f\n", op,
			median(p), minOf(p), maxOf(p), median(h), minOf(h), maxOf(h), ratio,
			median(cpu["plain"][op]), median(cpu["hooks"][op]), cr)
		minRatio = math.Min(minRatio, ratio)
		cpuRatio = math.Max(cpuRatio, cr)
	}
	fmt.Printf("(medians of %d rounds after a warm-up, %d files, %d threads, one cluster running at a time, order alternating;\n"+
		" cpu/kop: CPU ticks (10 ms) of the NameNode JVM and its co-process per 1000 ops, including the op's input generation;\n"+
		" min ratio and the largest cpu ratio over the operations go into the BENCH line)\n", o.rounds, o.files, o.threads)
	hooks.c.Stop()
	plain.c.Stop()

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
		s, err := startCluster(ctx, a, base, "lat-"+m.name, exttest.Options{InotifyEvents: m.inotify,
			NameNodeSite: map[string]string{
				"newtricks.namenode.ext.events.subscribe":          "CLOSE",
				"newtricks.namenode.ext.events.subscribe.prefixes": "/lat/",
			}}, log4j)
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
			before := cpuTicks(pids)
			time.Sleep(10 * time.Second)
			idle := cpuTicks(pids) - before
			long, err := latency(ctx, a, s, log4j, "long", o.closes)
			if err != nil {
				s.c.Stop()
				return err
			}
			fmt.Printf("%-8s %d-edit segment:     %s; idle NameNode CPU %.0f%% of a core\n", m.name, o.longEdits, long, float64(idle)/10)
			if m.name == "journal" {
				journalP99 = long.P99ms()
			}
		} else if m.name == "journal" {
			journalP99 = fresh.P99ms()
		}
		s.c.Stop()
	}
	fmt.Printf("BENCH nn-overhead min_ratio=%.3f cpu_ratio=%.3f event_p99_ms=%.0f\n", minRatio, cpuRatio, journalP99)
	return nil
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
func latency(ctx context.Context, a exttest.Artifacts, s side, log4j, tag string, n int) (lat, error) {
	if tag == "fresh" {
		if out, err := hadoopTool(ctx, a, s.c, log4j, "org.apache.hadoop.hdfs.tools.DFSAdmin", "-fs", s.c.URI(), "-rollEdits"); err != nil {
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
	cc, err := exttest.Dial(s.lay.NameNodeAPI)
	if err != nil {
		return lat{}, err
	}
	defer cc.Close()
	ns := pb.NewNamespaceClient(cc)
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := exttest.WaitServing(wctx, func(ctx context.Context) error {
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
				l.p50, l.p99, l.max = pct(d, 50), pct(d, 99), d[len(d)-1]
			}
			return l, nil
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func pct(sorted []float64, p float64) float64 {
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

var (
	statsRE = regexp.MustCompile(`--- (\w+) stats\s+---`)
	opsRE   = regexp.MustCompile(`Ops per sec:\s*([0-9.]+)`)
)

// nnbench runs one NNThroughputBenchmark operation against c's NameNode and returns ops/s.
func nnbench(ctx context.Context, a exttest.Artifacts, c *cluster.Cluster, log4j, op string, files, threads int) (float64, error) {
	args := []string{"-threads", strconv.Itoa(threads)}
	if op == "mkdirs" {
		args = append(args, "-dirs", strconv.Itoa(files))
	} else {
		args = append(args, "-files", strconv.Itoa(files))
	}
	args = append(args, "-baseDirName", fmt.Sprintf("/nnbench-%d", time.Now().UnixNano()))
	return nnbenchArgs(ctx, a, c, log4j, op, args...)
}

func nnbenchArgs(ctx context.Context, a exttest.Artifacts, c *cluster.Cluster, log4j, op string, extra ...string) (float64, error) {
	args := append([]string{"-fs", c.URI(), "-op", op}, extra...)
	text, err := hadoopTool(ctx, a, c, log4j, "org.apache.hadoop.hdfs.server.namenode.NNThroughputBenchmark", args...)
	if err != nil {
		return 0, fmt.Errorf("%v\n%s", err, tail(text, 30))
	}
	// Stats are printed per operation; "open", "rename" and "delete" first create their
	// inputs, so take the block named after op.
	for _, loc := range statsRE.FindAllStringSubmatchIndex(text, -1) {
		if !strings.EqualFold(text[loc[2]:loc[3]], op) {
			continue
		}
		m := opsRE.FindStringSubmatch(text[loc[1]:])
		if m == nil {
			break
		}
		return strconv.ParseFloat(m[1], 64)
	}
	return 0, fmt.Errorf("no %q stats in NNThroughputBenchmark output:\n%s", op, tail(text, 30))
}

// hadoopTool runs a Hadoop main class with a console log4j config (NNThroughputBenchmark prints
// its stats through log4j).
func hadoopTool(ctx context.Context, a exttest.Artifacts, c *cluster.Cluster, log4j, class string, args ...string) (string, error) {
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
	argv := append([]string{"-Xmx1g", "-cp", confDir + ":" + a.HadoopLibDir + "/*", class}, args...)
	out, err := exec.CommandContext(ctx, "java", argv...).CombinedOutput()
	return string(out), err
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s) == 0 {
		return math.NaN()
	}
	return s[len(s)/2]
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
