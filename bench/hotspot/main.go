// Command hotspot measures the initialization I/O storm on a real cluster: many readers (each
// its own HDFS client, as ranks are) all load the same hot files, whose blocks sit on three
// DataNodes at replication 3, from DataNodes whose reads and transfers are throttled with
// dfs.datanode.data.{read,transfer}.bandwidthPerSec so that DataNode bandwidth, not this
// machine's CPU, is the bottleneck. It times the barrier (the slowest reader) of these cases,
// each on its own identical set of files:
//
//   - rep3: replication 3;
//   - setrep-storm: `hdfs dfs -setrep -w <factor>` (Hadoop's FsShell) issued when the storm
//     starts, what an admin would do, with stock re-replication limits;
//   - setrep-ahead: the same command sent --lead before the storm, stock limits (the fair
//     control: the same lead time as the hint, without newtricks);
//   - hint: a newtricks hint sent --lead before the storm (limits boosted while copying,
//     balanced reads when -balanced);
//   - balanced-only (with -balanced): replication 3, and the NameNode hook told that the set's
//     files are hot (SetBalancedReads, as namenode-ext tells it for a hint's files), so the
//     reads are balanced over the three replicas and nothing is copied: balanced reads alone;
//   - replication-only (with -balanced): the same hint as "hint" (raise, boosted limits), but
//     the readers open the files as /.reserved/.inodes/<id>, a path BalancedReads does not
//     match, so the NameNode orders the replicas with its stock shuffle: the raise alone.
//
// The cases run --reps times, in alternating order (forward, then backward), and each is
// reported as median (min, max), with how evenly the DataNodes served the storm (the busiest
// DataNode's bytes read over the mean, from each DataNode's DataNodeActivity.BytesRead) and,
// for the setrep cases, when every block had its replicas (polled every 250 ms; `setrep -w`
// itself only looks every 10 s). The blocks are made to sit on three DataNodes by writing them
// while the other DataNodes are stopped. It fails if a hint does not get ready.
//
// With -check-datanodes the same run first measures every case on a second configuration
// (fewer DataNodes, -check-dn-bandwidth; the throttles changed with `dfsadmin -reconfig
// datanode`), which bench/sim uses as its out-of-sample check: -sim-out writes both
// configurations and their medians as JSON for `bench/sim -from`.
//
// It prints the physical limit (bytes read / aggregate throttled bandwidth of all DataNodes),
// the redundancy interval in force, the floor of vs_setrep_ahead that the physical limit sets
// against this run's setrep-ahead median, and as its last line `BENCH hotspot
// barrier_reduction=<1-hint/rep3> vs_setrep_ahead=<hint/setrep-ahead> ready_s=<median hint
// to ready> barrier_vs_limit=<hint/physical limit>`, then the controls' ratios
// (balanced_only_vs_rep3, replication_only_vs_rep3, hint_vs_replication_only,
// hint_vs_balanced_only, replication_only_vs_setrep_ahead), the check configuration's
// barrier_reduction and vs_setrep_ahead, and the run's commit and load (bench/internal/runinfo).
//
// With -scale N it instead measures what one hint of N files costs the NameNode (scale.go);
// with -failover, a hinted storm with a kill -9 of the active NameNode of an HA pair in the
// middle (failover.go).
package main

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/colinmarc/hdfs/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/newtricks/newtricks/bench/internal/plot"
	"github.com/newtricks/newtricks/bench/internal/runinfo"
	"github.com/newtricks/newtricks/bench/internal/simfile"
	"github.com/newtricks/newtricks/bench/internal/stats"
	"github.com/newtricks/newtricks/harness/cluster"
	"github.com/newtricks/newtricks/harness/extcluster"
	"github.com/newtricks/newtricks/namenode-ext/hotspot"
	"github.com/newtricks/newtricks/namenode-ext/hotspot/hintclient"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

type options struct {
	dataNodes  int
	bandwidth  int64
	readers    int
	files      int
	fileBytes  int64
	blockSize  int64
	lead       time.Duration
	reps       int
	interval   int
	balanced   bool
	readerAddr string
	// the second configuration (0 DataNodes: none) and where the medians go for bench/sim
	checkDataNodes int
	checkBandwidth int64
	simOut         string
	png            string // prefix of the storm plots ("": none)
	// -failover
	killAfter time.Duration
}

func main() {
	var o options
	flag.IntVar(&o.dataNodes, "datanodes", 12, "DataNodes (>= 4)")
	flag.Int64Var(&o.bandwidth, "dn-bandwidth", 16<<20, "read (and transfer) throttle of every DataNode, bytes/s")
	flag.IntVar(&o.readers, "readers", 32, "concurrent readers, each its own HDFS client")
	flag.IntVar(&o.files, "files", 4, "hot files")
	flag.Int64Var(&o.fileBytes, "file-bytes", 16<<20, "bytes per hot file")
	flag.Int64Var(&o.blockSize, "block-size", 8<<20, "block size of the hot files")
	flag.DurationVar(&o.lead, "lead", 10*time.Second, "how long before the storm the hint is sent")
	flag.IntVar(&o.reps, "reps", 3, "repetitions of the cases (alternating order)")
	flag.IntVar(&o.interval, "redundancy-interval", 1, "dfs.namenode.redundancy.interval.seconds and dfs.heartbeat.interval (stock: 3)")
	flag.StringVar(&o.readerAddr, "reader-addr", "127.0.0.2", "local address readers reach the NameNode from (not a DataNode's, as a trainer host is not one; empty: the default)")
	flag.BoolVar(&o.balanced, "balanced", true, "install io.newtricks.hadoop.BalancedReads on the NameNode (hinted files only) and run the balanced-only and replication-only controls")
	flag.IntVar(&o.checkDataNodes, "check-datanodes", 8, "DataNodes of the second configuration, measured first in the same run (bench/sim's out-of-sample check; 0: none; 4 <= n < -datanodes)")
	flag.Int64Var(&o.checkBandwidth, "check-dn-bandwidth", 24<<20, "read (and transfer) throttle of every DataNode in the second configuration, bytes/s")
	flag.StringVar(&o.simOut, "sim-out", "", "write both configurations and their medians here as JSON (bench/sim -from)")
	flag.StringVar(&o.png, "png", "bench-hotspot", "prefix of the plots: <prefix>-<configuration>.png, readers finished over time in each case's median storm (empty: none)")
	failover := flag.Bool("failover", false, "instead: a hinted storm on an HA pair with a kill -9 of the active NameNode in the middle, against the same storm without (failover.go)")
	flag.DurationVar(&o.killAfter, "kill-after", 3*time.Second, "with -failover: when in the storm the active NameNode is killed")
	scale := flag.Int("scale", 0, "instead of the storm: measure one hint of this many files on 3 DataNodes")
	scaleWatch := flag.Duration("scale-watch", 20*time.Second, "with -scale: readiness rounds watched before done")
	flag.Parse()
	if *scale > 0 {
		if err := runScale(*scale, *scaleWatch); err != nil {
			log.Fatal(err)
		}
		return
	}
	if err := o.validate(*failover); err != nil {
		log.Fatal(err)
	}
	run := run
	if *failover {
		run = runFailover
	}
	if err := run(o); err != nil {
		log.Fatal(err)
	}
}

// validate refuses parameters the bench cannot run with, naming the flag.
func (o options) validate(failover bool) error {
	switch {
	case o.dataNodes < 4:
		return fmt.Errorf("-datanodes %d: need at least 4 (the hot blocks sit on 3)", o.dataNodes)
	case o.dataNodes > 64:
		return fmt.Errorf("-datanodes %d: at most 64 on one machine", o.dataNodes)
	case o.reps < 1 || o.reps > 50:
		return fmt.Errorf("-reps %d: want 1 to 50", o.reps)
	case o.readers < 1 || o.readers > 4096:
		return fmt.Errorf("-readers %d: want 1 to 4096", o.readers)
	case o.files < 1 || o.files > 1000:
		return fmt.Errorf("-files %d: want 1 to 1000", o.files)
	case o.fileBytes < 1 || o.fileBytes > 4<<30:
		return fmt.Errorf("-file-bytes %d: want 1 B to 4 GiB", o.fileBytes)
	case o.blockSize < 1<<20 || o.blockSize%512 != 0:
		return fmt.Errorf("-block-size %d: want at least 1 MiB and a multiple of 512", o.blockSize)
	case o.bandwidth < 1<<20:
		return fmt.Errorf("-dn-bandwidth %d: want at least 1 MiB/s", o.bandwidth)
	case o.lead < 0 || o.lead > 10*time.Minute:
		return fmt.Errorf("-lead %v: want 0 to 10m", o.lead)
	case o.interval < 1 || o.interval > 60:
		return fmt.Errorf("-redundancy-interval %d: want 1 to 60 s", o.interval)
	}
	if failover {
		if o.killAfter <= 0 || o.killAfter > 10*time.Minute {
			return fmt.Errorf("-kill-after %v: want more than 0, at most 10m", o.killAfter)
		}
		return nil
	}
	if o.checkDataNodes != 0 {
		if o.checkDataNodes < 4 || o.checkDataNodes >= o.dataNodes {
			return fmt.Errorf("-check-datanodes %d: want 0 (none) or 4 to %d (fewer than -datanodes)", o.checkDataNodes, o.dataNodes-1)
		}
		if o.checkBandwidth < 1<<20 {
			return fmt.Errorf("-check-dn-bandwidth %d: want at least 1 MiB/s", o.checkBandwidth)
		}
	}
	return nil
}

const user0 = "trainer"

const (
	caseRep3        = "rep3"
	caseSetrepStorm = "setrep-storm"
	caseSetrepAhead = "setrep-ahead"
	caseHint        = "hint"
	caseBalanced    = "balanced-only"
	caseReplication = "replication-only"
)

func run(o options) (err error) {
	ri := runinfo.Start()
	e, err := newBenchEnv("bench-hotspot-")
	if err != nil {
		return err
	}
	a, su := e.a, e.su
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Hour)
	defer cancel()
	cases := []string{caseRep3, caseSetrepStorm, caseSetrepAhead, caseHint}
	if o.balanced {
		cases = append(cases, caseBalanced, caseReplication)
	}
	// The check configuration runs first: its DataNodes are a subset, so the later ones only
	// add capacity when they join, and no replica of the earlier sets goes missing.
	var phases []*simfile.Phase
	if o.checkDataNodes > 0 {
		phases = append(phases, &simfile.Phase{Role: "check", DataNodes: o.checkDataNodes, Bandwidth: o.checkBandwidth})
	}
	phases = append(phases, &simfile.Phase{Role: "calibrate", DataNodes: o.dataNodes, Bandwidth: o.bandwidth})

	start := time.Now()
	// 13 JVMs on a small shared machine: 6 min to start.
	c, lay, stop, err := startCluster(ctx, e, stormOptions(o, "bench-hotspot", nil, nil), 6*time.Minute, "cluster")
	if err != nil {
		return err
	}
	defer func() { stop(err != nil) }()
	log.Printf("cluster of %d DataNodes up in %v", o.dataNodes, time.Since(start).Round(time.Second))

	// One identical set of hot files per configuration, case and repetition, written while
	// only DataNodes 0-2 run, so every block of every set has its three replicas there.
	setDir := func(ph *simfile.Phase, cs string, rep int) string {
		return fmt.Sprintf("/bench/%s-%s-%d", ph.Role, cs, rep)
	}
	var dirs []string
	for _, ph := range phases {
		for rep := 0; rep < o.reps; rep++ {
			for _, cs := range cases {
				dirs = append(dirs, setDir(ph, cs, rep))
			}
		}
	}
	files, root, err := writeHotSets(ctx, c, o, su.Username, dirs)
	if err != nil {
		return err
	}
	defer root.Close()
	if n, err := blockNodes(ctx, lay, files); err != nil || n > 3 {
		return fmt.Errorf("hot blocks on %d DataNodes, want 3 (%v)", n, err)
	}
	// The replication-only control reads the same files by inode, which BalancedReads does
	// not match (it sees the path of the open).
	inodes := map[string]string{}
	for dir, names := range files {
		if !strings.Contains(dir, "-"+caseReplication+"-") {
			continue
		}
		for _, name := range names {
			st, err := root.Stat(name)
			if err != nil {
				return err
			}
			id, ok := st.Sys().(interface{ GetFileId() uint64 })
			if !ok {
				return fmt.Errorf("stat %s: no file id", name)
			}
			inodes[name] = fmt.Sprintf("/.reserved/.inodes/%d", id.GetFileId())
		}
	}

	hc, err := hintclient.Dial(lay.NameNodeAPI, user0)
	if err != nil {
		return err
	}
	defer hc.Close()
	var host pb.NameNodeHostClient
	if o.balanced {
		h, conn, err := nameNodeHost(lay)
		if err != nil {
			return err
		}
		defer conn.Close()
		host = h
	}
	fmt.Printf("hotspot bench on %s (dirty %v), load average at start %s\n", ri.Commit, ri.Dirty, ri.LoadStart)
	bwNow := map[int]int64{}
	for i := 0; i < o.dataNodes; i++ {
		bwNow[i] = o.bandwidth
	}
	for _, ph := range phases {
		ph.Readers, ph.Files, ph.FileBytes, ph.BlockSize, ph.Interval, ph.LeadS = o.readers, o.files, o.fileBytes, o.blockSize, o.interval, o.lead.Seconds()
		if err := setDataNodes(ctx, c, a, ph, bwNow); err != nil {
			return fmt.Errorf("%s configuration: %w", ph.Role, err)
		}
		if err := runPhase(ctx, c, a, lay, o, su.Username, hc, host, ph, cases, files, inodes,
			func(cs string, rep int) string { return setDir(ph, cs, rep) }); err != nil {
			return fmt.Errorf("%s configuration: %w", ph.Role, err)
		}
	}
	hd := phases[len(phases)-1]
	ratio := func(a, b string) float64 { return hd.Med(a) / hd.Med(b) }
	if o.balanced {
		// Each mechanism's share of the hint's improvement over replication 3, taken in both
		// orders: the two do not add up exactly, since balanced reads act on the replicas the
		// raise made.
		gain := hd.Med(caseRep3) - hd.Med(caseHint)
		fmt.Printf("shares of the hint's gain over rep3 (%.1f s): replication first %.0f%% then balanced reads %.0f%%; balanced reads first %.0f%% then replication %.0f%%\n",
			gain, 100*(hd.Med(caseRep3)-hd.Med(caseReplication))/gain, 100*(hd.Med(caseReplication)-hd.Med(caseHint))/gain,
			100*(hd.Med(caseRep3)-hd.Med(caseBalanced))/gain, 100*(hd.Med(caseBalanced)-hd.Med(caseHint))/gain)
	}
	if o.simOut != "" {
		m := simfile.Run{Commit: ri.Commit, Dirty: ri.Dirty, Date: start.UTC().Format(time.RFC3339), LoadStart: ri.LoadStart,
			LoadEnd: runinfo.Load(), Command: strings.Join(append([]string{"go run ./bench/hotspot"}, os.Args[1:]...), " "), Phases: phases}
		b, err := json.MarshalIndent(m, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(o.simOut, append(b, '\n'), 0o644); err != nil {
			return err
		}
		fmt.Printf("medians of both configurations written to %s: make bench-sim BENCH_SIM_FLAGS=-from=%s\n", o.simOut, o.simOut)
	}
	line := fmt.Sprintf("BENCH hotspot barrier_reduction=%.3f vs_setrep_ahead=%.3f ready_s=%.1f barrier_vs_limit=%.2f",
		1-ratio(caseHint, caseRep3), ratio(caseHint, caseSetrepAhead), hd.Ready[caseHint], hd.Med(caseHint)/hd.LimitS)
	if o.balanced {
		line += fmt.Sprintf(" balanced_only_vs_rep3=%.3f replication_only_vs_rep3=%.3f hint_vs_replication_only=%.3f hint_vs_balanced_only=%.3f replication_only_vs_setrep_ahead=%.3f",
			ratio(caseBalanced, caseRep3), ratio(caseReplication, caseRep3), ratio(caseHint, caseReplication),
			ratio(caseHint, caseBalanced), ratio(caseReplication, caseSetrepAhead))
	}
	if len(phases) > 1 {
		ck := phases[0]
		line += fmt.Sprintf(" check=%dx%s check_barrier_reduction=%.3f check_vs_setrep_ahead=%.3f",
			ck.DataNodes, strings.ReplaceAll(human(ck.Bandwidth), " ", ""), 1-ck.Med(caseHint)/ck.Med(caseRep3), ck.Med(caseHint)/ck.Med(caseSetrepAhead))
	}
	fmt.Printf("%s reps=%d %s\n", line, o.reps, ri.Fields())
	return nil
}

// setDataNodes makes exactly ph.DataNodes DataNodes (0 .. n-1) run, each throttled at
// ph.Bandwidth: a running DataNode at another throttle is reconfigured in place (`dfsadmin
// -reconfig datanode`, Hadoop 3.4 reconfigures both keys), one that starts gets it in its conf.
func setDataNodes(ctx context.Context, c *cluster.Cluster, a extcluster.Artifacts, ph *simfile.Phase, bwNow map[int]int64) error {
	dns := c.DataNodes()
	for _, dn := range dns {
		if dn.Index >= ph.DataNodes && dn.Running {
			if err := c.StopDataNode(dn.Index); err != nil {
				return err
			}
			if err := c.WaitDataNodeDead(ctx, dn.Index); err != nil {
				return err
			}
		}
	}
	var reconf []cluster.DataNodeInfo
	for _, dn := range dns[:ph.DataNodes] {
		if bwNow[dn.Index] != ph.Bandwidth {
			if err := setThrottle(dn.ConfDir, ph.Bandwidth); err != nil {
				return fmt.Errorf("datanode %d conf: %w", dn.Index, err)
			}
			if dn.Running {
				reconf = append(reconf, dn)
			}
			bwNow[dn.Index] = ph.Bandwidth
		}
		if !dn.Running {
			if err := c.StartDataNode(ctx, dn.Index); err != nil {
				return err
			}
		}
	}
	for _, dn := range reconf {
		if err := reconfigure(ctx, a, dn); err != nil {
			return fmt.Errorf("datanode %d: %w", dn.Index, err)
		}
	}
	// cluster.WaitLive wants every DataNode running: count the live ones instead.
	deadline := time.Now().Add(3 * time.Minute)
	for {
		st, err := c.Status(ctx)
		if err == nil && st.SafeMode == "" && len(st.LiveNodes) == ph.DataNodes {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("want %d live DataNodes out of safe mode after 3 min: %d live, safe mode %q (%v)", ph.DataNodes, len(st.LiveNodes), st.SafeMode, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

var throttleKeys = []string{"dfs.datanode.data.read.bandwidthPerSec", "dfs.datanode.data.transfer.bandwidthPerSec"}

// setThrottle rewrites the read and transfer throttles in a DataNode's hdfs-site.xml.
func setThrottle(confDir string, bw int64) error {
	p := filepath.Join(confDir, "hdfs-site.xml")
	b, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	var conf struct {
		Props []struct {
			Name  string `xml:"name"`
			Value string `xml:"value"`
		} `xml:"property"`
	}
	if err := xml.Unmarshal(b, &conf); err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	m := map[string]string{}
	for _, pr := range conf.Props {
		m[pr.Name] = pr.Value
	}
	for _, k := range throttleKeys {
		m[k] = fmt.Sprint(bw)
	}
	return os.WriteFile(p, cluster.SiteXML(m), 0o644)
}

// reconfigure runs `dfsadmin -reconfig datanode <ipc> start` and polls its status until it
// finished, and fails unless both throttles changed.
func reconfigure(ctx context.Context, a extcluster.Artifacts, dn cluster.DataNodeInfo) error {
	if _, err := dfsAdmin(ctx, a, dn.ConfDir, "-reconfig", "datanode", dn.IPCAddr, "start"); err != nil {
		return err
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		out, err := dfsAdmin(ctx, a, dn.ConfDir, "-reconfig", "datanode", dn.IPCAddr, "status")
		if err != nil {
			return err
		}
		if strings.Contains(out, "finished") {
			for _, k := range throttleKeys {
				if !strings.Contains(out, "SUCCESS: Changed property "+k) {
					return fmt.Errorf("reconfiguration did not change %s:\n%s", k, out)
				}
			}
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("reconfiguration not finished after 2 min:\n%s", out)
		}
		time.Sleep(time.Second)
	}
}

func dfsAdmin(ctx context.Context, a extcluster.Artifacts, confDir string, args ...string) (string, error) {
	lib := a.HadoopLibDir
	if lib == "" {
		lib = cluster.DefaultHadoopLib()
	}
	cmd := exec.CommandContext(ctx, "java", "-XX:+IgnoreUnrecognizedVMOptions", "--add-opens=java.base/java.lang=ALL-UNNAMED",
		"-cp", confDir+":"+filepath.Join(lib, "*"), "org.apache.hadoop.hdfs.tools.DFSAdmin")
	cmd.Args = append(cmd.Args, args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("dfsadmin %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// nameNodeHost dials the NameNode hook's host service on its unix socket, as namenode-ext
// does (the bench's own cluster: the socket dir is the one it configured).
func nameNodeHost(lay extcluster.Layout) (pb.NameNodeHostClient, *grpc.ClientConn, error) {
	socks, err := filepath.Glob(filepath.Join(lay.SocketDir, "nn-*.sock"))
	if err != nil || len(socks) != 1 {
		return nil, nil, fmt.Errorf("NameNode host socket in %s: %v (%v)", lay.SocketDir, socks, err)
	}
	conn, err := grpc.NewClient("unix://"+socks[0], grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, nil, err
	}
	return pb.NewNameNodeHostClient(conn), conn, nil
}

// runPhase runs every case of one configuration o.reps times in alternating order and fills
// ph's medians.
func runPhase(ctx context.Context, c *cluster.Cluster, a extcluster.Artifacts, lay extcluster.Layout, o options, su string,
	hc *hintclient.Client, host pb.NameNodeHostClient, ph *simfile.Phase, cases []string, files map[string][]string,
	inodes map[string]string, setDir func(string, int) string) error {
	hot := int64(o.files) * o.fileBytes
	total := hot * int64(o.readers)
	ph.LimitS = float64(total) / float64(int64(ph.DataNodes)*ph.Bandwidth)
	fmt.Printf("\n%s configuration: %d DataNodes read/transfer-throttled at %s/s each, %d readers (own clients), %d hot files of %s (%s blocks), %s read per storm\n",
		ph.Role, ph.DataNodes, human(ph.Bandwidth), o.readers, o.files, human(o.fileBytes), human(o.blockSize), human(total))
	fmt.Printf("dfs.namenode.redundancy.interval.seconds=%d and dfs.heartbeat.interval=%d (stock: 3 and 3); balanced reads: %v; %d repetitions, alternating order; load average %s\n",
		o.interval, o.interval, o.balanced, o.reps, loadAverage())
	fmt.Printf("physical limit: %.1f s (bytes read / aggregate throttled bandwidth of all DataNodes); one replica set of 3 DataNodes: %.1f s\n",
		ph.LimitS, float64(total)/float64(3*ph.Bandwidth))

	// The hint decides the factor; setrep uses the same one, so only the mechanism differs.
	dry, err := createHint(ctx, hc, hintclient.Hint{Paths: []string{setDir(caseHint, 0)}, In: o.lead, For: 10 * time.Minute,
		Readers: o.readers, DryRun: true})
	if err != nil {
		return fmt.Errorf("plan: %w", err)
	}
	factor := dry.Files[0].Target
	ph.Factor = factor
	want := min(factor, ph.DataNodes)

	barriers := map[string][]float64{}
	storms := map[string][]result{}
	shares := map[string][]float64{}
	readyOf := map[string][]float64{}
	err = eachCase(ctx, c, o.reps, cases, func(rep int, cs string) (func(share float64), error) {
		dir := setDir(cs, rep)
		var r result
		var ready time.Duration
		var err error
		switch cs {
		case caseRep3:
			r, err = storm(ctx, c, o, files[dir])
		case caseSetrepStorm:
			done := make(chan error, 1)
			var rd *readiness
			r, err = stormWith(ctx, c, o, files[dir], func() {
				rd = watchReady(ctx, lay, files[dir], want)
				go func() { done <- setrep(ctx, c, a, su, factor, dir) }()
			})
			if serr := <-done; err == nil && serr != nil {
				err = serr
			}
			if err == nil {
				ready, err = rd.wait()
			}
		case caseSetrepAhead:
			done := make(chan error, 1)
			sent := time.Now()
			rd := watchReady(ctx, lay, files[dir], want)
			go func() { done <- setrep(ctx, c, a, su, factor, dir) }()
			time.Sleep(time.Until(sent.Add(o.lead)))
			r, err = storm(ctx, c, o, files[dir])
			if serr := <-done; err == nil && serr != nil {
				err = serr
			}
			if err == nil {
				ready, err = rd.wait()
			}
		case caseHint:
			r, ready, err = hintCase(ctx, c, o, hc, dir, files[dir])
		case caseReplication:
			var paths []string
			for _, name := range files[dir] {
				paths = append(paths, inodes[name])
			}
			r, ready, err = hintCase(ctx, c, o, hc, dir, paths)
		case caseBalanced:
			r, err = balancedOnly(ctx, c, o, host, files[dir])
		}
		if err != nil {
			return nil, err
		}
		barriers[cs] = append(barriers[cs], r.barrier.Seconds())
		storms[cs] = append(storms[cs], r)
		return func(share float64) {
			shares[cs] = append(shares[cs], share)
			extra := ""
			switch cs {
			case caseHint, caseReplication:
				extra = fmt.Sprintf(", ready %.1f s after the hint", ready.Seconds())
			case caseSetrepStorm, caseSetrepAhead:
				extra = fmt.Sprintf(", every block at %d replicas %.1f s after the setrep", want, ready.Seconds())
			}
			if cs != caseRep3 && cs != caseBalanced {
				readyOf[cs] = append(readyOf[cs], ready.Seconds())
			}
			fmt.Printf("rep %d %-16s barrier %6.1f s  (mean reader %5.1f s)  busiest DataNode served %.2fx the mean%s\n",
				rep, cs, r.barrier.Seconds(), r.mean.Seconds(), share, extra)
		}, nil
	})
	if err != nil {
		return err
	}
	ph.Barrier, ph.Share, ph.Ready = map[string][3]float64{}, map[string]float64{}, map[string]float64{}
	for _, cs := range cases {
		m, lo, hi := stats.Range(barriers[cs])
		ph.Barrier[cs] = [3]float64{m, lo, hi}
		label := cs
		switch cs {
		case caseRep3, caseBalanced:
			label += " (3)"
		default:
			label = fmt.Sprintf("%s (-> %d)", cs, factor)
		}
		sm, slo, shi := stats.Range(shares[cs])
		ph.Share[cs] = sm
		rdy := ""
		if rs := readyOf[cs]; len(rs) > 0 {
			rm, rlo, rhi := stats.Range(rs)
			ph.Ready[cs] = rm
			rdy = fmt.Sprintf("  ready %.1f s (%.1f, %.1f) after it was sent", rm, rlo, rhi)
		}
		fmt.Printf("%-26s barrier median %6.1f s (min %5.1f, max %5.1f)  vs rep3 %.3f  vs limit %.2f  busiest/mean DataNode %.2f (%.2f, %.2f)%s\n",
			label, m, lo, hi, m/ph.Med(caseRep3), m/ph.LimitS, sm, slo, shi, rdy)
	}
	fmt.Printf("floor: at the physical limit %.1f s (a DataNode's throttle lets short bursts above it) vs_setrep_ahead would be %.3f against this run's setrep-ahead median (%.1f s, ready %.1f s after it was sent, storm at %v); the hint is at %.2fx the limit; load average %s\n",
		ph.LimitS, ph.LimitS/ph.Med(caseSetrepAhead), ph.Med(caseSetrepAhead), ph.Ready[caseSetrepAhead], o.lead, ph.Med(caseHint)/ph.LimitS, loadAverage())
	if o.png != "" {
		p := fmt.Sprintf("%s-%s.png", o.png, ph.Role)
		if err := writeStormPlot(p, ph.Role+" configuration", cases, storms, []plot.Mark{{X: ph.LimitS, Label: "physical limit"}}); err != nil {
			return err
		}
		fmt.Printf("plot: %s\n", p)
	}
	if len(cases) > 4 {
		fmt.Printf("controls (%s): balanced-only/rep3 %.3f, replication-only/rep3 %.3f, hint/replication-only %.3f (balanced reads on top of the raise), hint/balanced-only %.3f (the raise on top of balanced reads), replication-only/setrep-ahead %.3f (boost and hint vs stock setrep, both unbalanced)\n",
			ph.Role, ph.Med(caseBalanced)/ph.Med(caseRep3), ph.Med(caseReplication)/ph.Med(caseRep3), ph.Med(caseHint)/ph.Med(caseReplication),
			ph.Med(caseHint)/ph.Med(caseBalanced), ph.Med(caseReplication)/ph.Med(caseSetrepAhead))
	}
	return nil
}

// balancedOnly runs the storm on files at replication 3 with the NameNode hook told that they
// are hot, as namenode-ext tells it for a hint's files, and clears that after. No hint is held
// meanwhile (each hint case ends with done before the next case), so namenode-ext, which
// pushes its set only when it changes, does not overwrite it.
func balancedOnly(ctx context.Context, c *cluster.Cluster, o options, host pb.NameNodeHostClient, files []string) (result, error) {
	resp, err := host.SetBalancedReads(ctx, &pb.SetBalancedReadsRequest{Paths: files, Service: true})
	if err != nil {
		return result{}, fmt.Errorf("SetBalancedReads: %w", err)
	}
	if !resp.GetTopologyInstalled() || !resp.GetAuditHookInstalled() {
		return result{}, fmt.Errorf("balanced reads not installed on the NameNode (topology %v, audit hook %v)",
			resp.GetTopologyInstalled(), resp.GetAuditHookInstalled())
	}
	r, serr := storm(ctx, c, o, files)
	if _, err := host.SetBalancedReads(ctx, &pb.SetBalancedReadsRequest{Service: true}); err != nil && serr == nil {
		serr = fmt.Errorf("SetBalancedReads (clear): %w", err)
	}
	return r, serr
}

// hintCase sends a hint --lead before the storm and fails if it is not ready by the storm's
// end.
func hintCase(ctx context.Context, c *cluster.Cluster, o options, hc *hintclient.Client, dir string, files []string) (result, time.Duration, error) {
	sent := time.Now()
	plan, err := createHint(ctx, hc, hintclient.Hint{Paths: []string{dir}, In: o.lead, For: 10 * time.Minute, Readers: o.readers})
	if err != nil {
		return result{}, 0, fmt.Errorf("hint: %w", err)
	}
	defer func() {
		if _, err := hc.Done(ctx, plan.HintID); err != nil {
			log.Printf("done: %v", err)
		}
	}()
	readyCh := make(chan error, 1)
	var readyAt time.Time
	wctx, wcancel := context.WithCancel(ctx)
	defer wcancel()
	go func() {
		st, err := hc.WaitReady(wctx, plan.HintID, 100*time.Millisecond)
		if err == nil {
			readyAt = st.ReadyAt
		}
		readyCh <- err
	}()
	time.Sleep(time.Until(sent.Add(o.lead)))
	r, err := storm(ctx, c, o, files)
	if err != nil {
		return result{}, 0, err
	}
	select {
	case err := <-readyCh:
		if err != nil {
			return result{}, 0, fmt.Errorf("hint never ready: %w", err)
		}
	case <-time.After(30 * time.Second):
		return result{}, 0, fmt.Errorf("hint %s not ready 30 s after the storm", plan.HintID)
	}
	return r, readyAt.Sub(sent), nil
}

// loadAverage is the 1, 5 and 15 minute load average of this machine.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// readiness polls the block locations of files (namenode-ext's Locate, as the superuser)
// every 250 ms until every block has want replicas.
type readiness struct {
	start time.Time
	done  chan struct{}
	at    time.Duration
	err   error
}

func watchReady(ctx context.Context, lay extcluster.Layout, files []string, want int) *readiness {
	r := &readiness{start: time.Now(), done: make(chan struct{})}
	go func() {
		defer close(r.done)
		ns, conn, err := extcluster.NamespaceClient(lay)
		if err != nil {
			r.err = err
			return
		}
		defer conn.Close()
		deadline := r.start.Add(5 * time.Minute)
		for {
			short := false
			for _, name := range files {
				lb, err := ns.Locate(ctx, &pb.LocateRequest{Path: name, User: user0})
				if err != nil {
					r.err = err
					return
				}
				for _, b := range lb.GetBlocks() {
					if len(b.GetLocations()) < want {
						short = true
					}
				}
			}
			if !short {
				r.at = time.Since(r.start)
				return
			}
			if time.Now().After(deadline) {
				r.err = fmt.Errorf("blocks of %s not at %d replicas after 5 min", files[0], want)
				return
			}
			select {
			case <-ctx.Done():
				r.err = ctx.Err()
				return
			case <-time.After(250 * time.Millisecond):
			}
		}
	}()
	return r
}

func (r *readiness) wait() (time.Duration, error) {
	<-r.done
	return r.at, r.err
}

// bytesRead reads DataNodeActivity.BytesRead of every running DataNode (client reads, not replication
// transfers), after the JMX view refreshed (metrics2 refreshes it at most every 10 s) if fresh.
func bytesRead(ctx context.Context, c *cluster.Cluster, fresh bool) (map[int]float64, error) {
	if fresh {
		time.Sleep(11 * time.Second)
	}
	out := map[int]float64{}
	for _, dn := range c.DataNodes() {
		if !dn.Running {
			continue
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet,
			"http://"+dn.HTTPAddr+"/jmx?qry=Hadoop:service=DataNode,name=DataNodeActivity-*", nil)
		if err != nil {
			return nil, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, fmt.Errorf("datanode %d jmx: %w", dn.Index, err)
		}
		var body struct {
			Beans []map[string]any `json:"beans"`
		}
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if err != nil || len(body.Beans) == 0 {
			return nil, fmt.Errorf("datanode %d DataNodeActivity bean: %v", dn.Index, err)
		}
		v, ok := body.Beans[0]["BytesRead"].(float64)
		if !ok {
			return nil, fmt.Errorf("datanode %d: no BytesRead", dn.Index)
		}
		out[dn.Index] = v
	}
	return out, nil
}

// maxOverMean is the busiest DataNode's bytes read between two readings over the mean.
func maxOverMean(before, after map[int]float64) float64 {
	var sum, top float64
	for i, v := range after {
		d := v - before[i]
		sum += d
		top = math.Max(top, d)
	}
	if sum == 0 {
		return 0
	}
	return top / (sum / float64(len(after)))
}

type result struct {
	barrier, mean time.Duration
	took          []time.Duration // every reader's time, for the plot
}

func storm(ctx context.Context, c *cluster.Cluster, o options, files []string) (result, error) {
	return stormWith(ctx, c, o, files, func() {})
}

// stormWith connects every reader first (each its own client), then releases them all at once,
// calls atStart, and waits for the slowest.
func stormWith(ctx context.Context, c *cluster.Cluster, o options, files []string, atStart func()) (result, error) {
	return readers(ctx, c, o, atStart, func(cl *hdfs.Client) error {
		buf := make([]byte, 1<<20)
		for _, name := range files {
			f, err := cl.Open(name)
			if err != nil {
				return err
			}
			n, err := io.CopyBuffer(io.Discard, f, buf)
			f.Close()
			if err == nil && n != o.fileBytes {
				err = fmt.Errorf("%s: read %d bytes, want %d", name, n, o.fileBytes)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// readerClient connects one reader. On loopback every DataNode is 127.0.0.1, so a reader at
// 127.0.0.1 would be "local" to a random DataNode, which the NameNode sorts first; readers
// come from addr instead, a host with no DataNode, as trainer hosts are.
func readerClient(c *cluster.Cluster, addr string) (*hdfs.Client, error) {
	opts := c.ClientOptions(user0)
	if addr != "" {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(addr)}, Timeout: 10 * time.Second}
		opts.NamenodeDialFunc = d.DialContext
	}
	return hdfs.NewClient(opts)
}

// setrep runs Hadoop's own `hdfs dfs -setrep -w` as the superuser.
func setrep(ctx context.Context, c *cluster.Cluster, a extcluster.Artifacts, su string, factor int, path string) error {
	lib := a.HadoopLibDir
	if lib == "" {
		lib = cluster.DefaultHadoopLib()
	}
	cmd := exec.CommandContext(ctx, "java", "-XX:+IgnoreUnrecognizedVMOptions", "--add-opens=java.base/java.lang=ALL-UNNAMED",
		"-cp", c.DataNodes()[0].ConfDir+":"+filepath.Join(lib, "*"),
		"org.apache.hadoop.fs.FsShell", "-setrep", "-w", fmt.Sprint(factor), path)
	cmd.Env = append(os.Environ(), "HADOOP_USER_NAME="+su)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v: %s", err, out)
	}
	return nil
}

// createHint retries while namenode-ext starts or recovers.
func createHint(ctx context.Context, c *hintclient.Client, h hintclient.Hint) (*hotspot.Plan, error) {
	return whileUnavailable(500*time.Millisecond, func() (*hotspot.Plan, error) { return c.Create(ctx, h) })
}

func human(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d B", n)
}

// writeRetry writes one file at replication 3. The NameNode notices stopped DataNodes only
// after the heartbeat expiry, and until then may still pick one for a pipeline, which the Go
// client does not recover from: start over until a pipeline of live DataNodes is chosen.
func writeRetry(ctx context.Context, c *cluster.Cluster, name string, data []byte, blockSize int64) error {
	var last error
	for attempt := 0; attempt < 40; attempt++ {
		w, err := c.Client(user0)
		if err != nil {
			return err
		}
		last = func() error {
			if err := w.MkdirAll(filepath.Dir(name), 0o755); err != nil {
				return err
			}
			_ = w.Remove(name)
			fw, err := w.CreateFile(name, 3, blockSize, 0o644)
			if err != nil {
				return err
			}
			if _, err := fw.Write(data); err != nil {
				fw.Close()
				return err
			}
			return fw.Close()
		}()
		w.Close()
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
	return fmt.Errorf("write %s: %w", name, last)
}

// blockNodes counts the distinct DataNodes holding blocks of the files (through
// namenode-ext's Locate).
func blockNodes(ctx context.Context, lay extcluster.Layout, files map[string][]string) (int, error) {
	ns, conn, err := extcluster.NamespaceClient(lay)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	nodes := map[string]bool{}
	for _, names := range files {
		for _, name := range names {
			lb, err := ns.Locate(ctx, &pb.LocateRequest{Path: name, User: user0})
			if err != nil {
				return 0, err
			}
			for _, b := range lb.GetBlocks() {
				for _, l := range b.GetLocations() {
					nodes[l.GetXferAddr()] = true
				}
			}
		}
	}
	return len(nodes), nil
}
