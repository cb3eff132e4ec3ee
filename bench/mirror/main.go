// Command bench-mirror measures what checkpoint mirroring saves an evaluation job in another
// data centre (`make bench-mirror`). Two real clusters run on loopback, dc-a (training, with
// namenode-ext mirroring) and dc-b (evaluation); every connection that crosses between them goes
// through the WAN emulator (harness/wan: one-way delay, shared bandwidth cap). A simulated
// trainer writes a checkpoint of many ~15 KB tensors plus a few multi-MB shards on dc-a. The
// evaluation job's visible I/O time, from "checkpoint complete on dc-a" to "evaluator has read
// every byte", is measured for:
//
//	(a) wan:     reading it from dc-a across the WAN at 16, 32, 64 and 128 parallel readers
//	             (-readers); the count with the lowest median is the baseline (a file-by-file
//	             reader is measured on a sample and extrapolated: it is always slower);
//	(b) distcp:  real DistCp (hadoop-distcp 3.4.2, local job runner, -m 16 -strategy dynamic)
//	             started when the checkpoint completes, then reading it locally on dc-b;
//	(c) mirror:  newtricks mirroring during the write, the evaluator waiting on Mirror.Wait,
//	             then reading locally on dc-b; the writer takes 0.5, 1 and 2 times the link's
//	             time for the checkpoint (its bytes / the link's rate; -writer-speeds), so at
//	             0.5 the writer outruns the link and the mirror cannot be done at completion.
//
// For each writer speed (c) is set against its floor: the checkpoint bytes not yet on dc-b at
// completion, at the link's rate, plus a local read of the checkpoint on dc-b timed in the same
// run. "Not yet on dc-b" is measured by the bench, not by the mirror: the WAN relay's bytes
// delivered to dc-b by completion, scaled by the run's checkpoint bytes per link byte, checked
// against dc-b's NameNode (its file lengths, an upper bound of unsent); see delivered.go. The
// mirror's own Status is printed beside them, never used. wrote_<s>x in the BENCH line is the
// trainer's actual write time over the link's time: a loaded machine may not keep the pace.
//
// Rounds interleave every run in alternating order. The last line is
// "BENCH mirror eval_io_reduction=<1 - c(1x) / min(a, b)> floor_ratio=<the worst over the
// speeds of the median c / floor> link_utilization=<fraction at 1x> baseline_readers=<n> ...
// commit=... dirty=... load_start=... load_end=...", where link utilisation is the mirror's
// bytes over the link divided by the link's capacity during the intervals in which more than
// 1 MiB of closed files was waiting to be mirrored. -quick (QUICK=1) is a small development run.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"image/color"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/colinmarc/hdfs/v2"

	"github.com/newtricks/newtricks/bench/internal/plot"
	"github.com/newtricks/newtricks/bench/internal/quick"
	"github.com/newtricks/newtricks/bench/internal/runinfo"
	"github.com/newtricks/newtricks/bench/internal/stats"
	"github.com/newtricks/newtricks/harness/cluster"
	"github.com/newtricks/newtricks/harness/extcluster"
	"github.com/newtricks/newtricks/harness/wan"
	"github.com/newtricks/newtricks/internal/hdfsio"
	"github.com/newtricks/newtricks/namenode-ext/mirror/mirrorclient"
)

type options struct {
	out                string
	rounds             int
	smallFiles         int
	smallSize          int
	shards             int
	shardSize          int
	speeds             []float64 // writer's time for the checkpoint, in multiples of the link's time
	rtt                time.Duration
	rate               int64
	readers            []int // baseline (a)'s reader counts, swept
	localReaders       int   // readers of every local read on dc-b
	writers            int   // the simulated trainer's parallel writers
	distcpMaps         int
	distcpStrategy     string
	concurrency        int
	serialSample       int
	distcpLib, user    string
	methods            string
	hadoopLib, cliPath string
	trace              string
	quick              bool
}

// quick are the small numbers of -quick (QUICK=1): a development run end to end in a few
// minutes, not the benchmark's figures.
var quickFlags = map[string]string{"rounds": "1", "small-files": "400", "shards": "2", "shard-size": "16777216", "readers": "16,64", "serial-sample": "10"}

func quickString() string { return quick.String(quickFlags) }

// parseList reads a comma-separated flag value of positive numbers.
func parseList[T int | float64](name, s string, parse func(string) (T, error)) ([]T, error) {
	var out []T
	for _, f := range strings.Split(s, ",") {
		v, err := parse(strings.TrimSpace(f))
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("-%s %q: want comma-separated positive numbers", name, s)
		}
		if slices.Contains(out, v) {
			return nil, fmt.Errorf("-%s %q: %v twice", name, s, v)
		}
		out = append(out, v)
	}
	return out, nil
}

func main() {
	var o options
	flag.StringVar(&o.out, "out", ".", "directory for the log and the PNG timeline")
	flag.IntVar(&o.rounds, "rounds", 3, "rounds (each runs a, b and c, order alternating)")
	flag.IntVar(&o.smallFiles, "small-files", 1990, "~15 KB tensor files per checkpoint")
	flag.IntVar(&o.smallSize, "small-size", 15000, "mean size of a small file")
	flag.IntVar(&o.shards, "shards", 10, "multi-MB shard files per checkpoint")
	flag.IntVar(&o.shardSize, "shard-size", 30<<20, "size of a shard file")
	speeds := flag.String("writer-speeds", "0.5,1,2", "the simulated trainer's time to write a checkpoint, in multiples of the link's time for it (checkpoint bytes / -rate); below 1 the writer is faster than the link; the BENCH line needs 1")
	flag.DurationVar(&o.rtt, "rtt", 40*time.Millisecond, "emulated WAN round-trip time")
	flag.Int64Var(&o.rate, "rate", 20<<20, "emulated WAN bandwidth, bytes/s each way")
	readers := flag.String("readers", "16,32,64,128", "parallel reader counts of baseline (a), comma-separated; the one with the lowest median is the baseline")
	flag.IntVar(&o.writers, "writers", 4, "parallel writers of the simulated trainer (more if it cannot keep the 0.5x pace: see wrote_0.5x)")
	flag.IntVar(&o.localReaders, "local-readers", 16, "parallel readers of every local read on dc-b (after DistCp, after the mirror, and the floor's local read)")
	flag.BoolVar(&o.quick, "quick", false, "small numbers for development ("+quickString()+"), unless set explicitly; the figures are not the benchmark's")
	flag.IntVar(&o.distcpMaps, "maps", 16, "DistCp -m")
	flag.StringVar(&o.distcpStrategy, "distcp-strategy", "dynamic", "DistCp -strategy: dynamic hands files to maps in small chunks, as an operator copying many small files would choose (the default, uniformsize, splits by bytes: one map gets the ~1,000 small files and copies them one by one)")
	flag.IntVar(&o.concurrency, "concurrency", 128, "newtricks.mirror.concurrency")
	flag.StringVar(&o.methods, "methods", "wan,distcp,mirror", "which of wan, distcp, mirror to run (a quick look; the BENCH line needs all three, and the mirror at 1x)")
	flag.IntVar(&o.serialSample, "serial-sample", 50, "files read one by one across the WAN to extrapolate the file-by-file reader")
	flag.StringVar(&o.trace, "trace", "", "also write each phase's wall-clock time (unix s, round, method, phase) to this file, to line the evaluator's windows up with a system sampler")
	flag.Parse()
	if o.quick {
		if err := quick.Apply(quickFlags); err != nil {
			fmt.Fprintln(os.Stderr, "bench-mirror:", err)
			os.Exit(2)
		}
	}
	var err error
	if o.readers, err = parseList("readers", *readers, strconv.Atoi); err == nil {
		o.speeds, err = parseList("writer-speeds", *speeds, func(s string) (float64, error) { return strconv.ParseFloat(s, 64) })
	}
	if err == nil && (o.writers < 1 || o.localReaders < 1) {
		err = fmt.Errorf("-writers %d, -local-readers %d: want at least 1", o.writers, o.localReaders)
	}
	if err == nil && !slices.Contains(o.speeds, 1) {
		err = fmt.Errorf("-writer-speeds %q: the BENCH line's eval_io_reduction is at 1", *speeds)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-mirror:", err)
		os.Exit(2)
	}
	o.distcpLib = os.Getenv("NEWTRICKS_DISTCP_LIB")
	o.user = "alice"
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench-mirror:", err)
		os.Exit(1)
	}
}

// file is one file of the checkpoint.
type file struct {
	rel  string
	size int
}

func checkpointFiles(o options) ([]file, int64) {
	r := rand.New(rand.NewPCG(1, 2))
	var fs []file
	var total int64
	for i := 0; i < o.smallFiles; i++ {
		s := o.smallSize/2 + r.IntN(o.smallSize)
		fs = append(fs, file{fmt.Sprintf("model/layer_%03d/tensor_%04d.pt", i/50, i), s})
		total += int64(s)
	}
	// Shards are spread through the write, as a trainer saving optimizer state would.
	for i := 0; i < o.shards; i++ {
		at := (i + 1) * len(fs) / (o.shards + 1)
		f := file{fmt.Sprintf("optim/shard_%02d.bin", i), o.shardSize}
		fs = append(fs[:at], append([]file{f}, fs[at:]...)...)
		total += int64(o.shardSize)
	}
	return fs, total
}

type env struct {
	o          options
	traceMu    sync.Mutex
	traceF     *os.File
	a, b       *cluster.Cluster
	lay        extcluster.Layout
	pull, push *wan.Relay // pull: dc-b clients reaching dc-a; push: the mirror reaching dc-b
	su         string
	hostsFile  string
	localMaps  string // jar with ManyMapsLocalProvider
}

func run(o options) error {
	arts, err := extcluster.ArtifactsFromEnv()
	if err != nil {
		return err
	}
	if o.distcpLib == "" {
		return errors.New("NEWTRICKS_DISTCP_LIB is not set (run `make bench-mirror`, which resolves hadoop-distcp 3.4.2)")
	}
	if m, _ := filepath.Glob(filepath.Join(o.distcpLib, "hadoop-distcp-*.jar")); len(m) == 0 {
		return fmt.Errorf("no hadoop-distcp jar in %s (run `make distcp`)", o.distcpLib)
	}
	o.hadoopLib = arts.HadoopLibDir
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	prov := runinfo.Start()
	e := &env{o: o, su: currentUser()}
	if o.trace != "" {
		if e.traceF, err = os.Create(o.trace); err != nil {
			return err
		}
		defer e.traceF.Close()
	}
	link := wan.Link{Delay: o.rtt / 2, Rate: o.rate}
	var dcA atomic.Value // set of dc-a addresses, known after start
	dcA.Store(map[string]bool{})
	if e.pull, err = wan.Listen("127.0.0.1:0", link, func(addr string) bool { return dcA.Load().(map[string]bool)[addr] }); err != nil {
		return err
	}
	defer e.pull.Close()
	if e.push, err = wan.Listen("127.0.0.1:0", link, nil); err != nil {
		return err
	}
	defer e.push.Close()
	base, err := os.MkdirTemp("", "bench-mirror-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(base)
	ctx := context.Background()
	site := map[string]string{
		"hadoop.proxyuser.mirror.hosts": "127.0.0.1",
		"hadoop.proxyuser.mirror.users": "*",
		"dfs.replication":               "1",
	}
	bcfg, _, err := extcluster.Setup(arts, filepath.Join(base, "dc-b"), extcluster.Options{Name: "dc-b", DataNodes: 1, NoHooks: true, NameNodeSite: site})
	if err != nil {
		return err
	}
	bcfg.CoreSite = site
	if e.b, err = cluster.Start(ctx, bcfg); err != nil {
		return err
	}
	defer e.b.Stop()
	asite := map[string]string{
		"newtricks.mirror.rules":              "ck",
		"newtricks.mirror.dest.namenode":      e.b.NameNodeAddr(),
		"newtricks.mirror.dest.http":          e.b.NameNodeHTTPAddr(),
		"newtricks.mirror.dest.socks-proxy":   e.push.Addr(),
		"newtricks.mirror.proxy-user":         "mirror",
		"newtricks.mirror.concurrency":        strconv.Itoa(o.concurrency),
		"newtricks.mirror.rule.ck.source":     "/ckpt/{job}/step_{step}",
		"newtricks.mirror.rule.ck.completion": "marker",
	}
	for k, v := range site {
		asite[k] = v
	}
	acfg, lay, err := extcluster.Setup(arts, filepath.Join(base, "dc-a"), extcluster.Options{Name: "dc-a", DataNodes: 1, NameNodeSite: asite})
	if err != nil {
		return err
	}
	acfg.CoreSite = site
	// dc-a's DataNodes register under names that only the DistCp JVM resolves (to the WAN
	// relay's forwards on 127.0.0.2, see runDistCp); everyone else reaches them by IP.
	dnSite := acfg.DataNodeSite
	acfg.DataNodeSite = func(i int) map[string]string {
		m := dnSite(i)
		m["dfs.datanode.hostname"] = fmt.Sprintf("dca-dn%d", i)
		return m
	}
	if e.a, err = cluster.Start(ctx, acfg); err != nil {
		return err
	}
	defer e.a.Stop()
	// namenode-ext's log (the mirror's per-checkpoint lag breakdown) is kept beside the bench's.
	defer func() {
		if b, err := os.ReadFile(filepath.Join(base, "dc-a", "ext-logs", "newtricks-namenode-ext.log")); err == nil {
			os.WriteFile(filepath.Join(o.out, "namenode-ext-dc-a.log"), b, 0o644)
		}
	}()
	e.lay = lay
	addrs := map[string]bool{e.a.NameNodeAddr(): true}
	for _, dn := range e.a.DataNodes() {
		addrs[dn.XferAddr] = true
	}
	dcA.Store(addrs)
	// Java's block reader cannot read through SOCKS (SocksSocketFactory sockets have no
	// channel and BlockReaderRemote reads into direct buffers), so DistCp reaches dc-a through
	// plain forwards of the same link on 127.0.0.2, same ports.
	hosts := "127.0.0.1 localhost\n"
	if h, err := os.Hostname(); err == nil {
		hosts += "127.0.0.1 " + h + "\n"
	}
	for a := range addrs {
		_, port, _ := net.SplitHostPort(a)
		if _, err := e.pull.Forward("127.0.0.2:"+port, a); err != nil {
			return err
		}
	}
	for i := range e.a.DataNodes() {
		hosts += fmt.Sprintf("127.0.0.2 dca-dn%d\n", i)
	}
	if e.localMaps, err = buildLocalMaps(base, o.distcpLib); err != nil {
		return err
	}
	e.hostsFile = filepath.Join(base, "distcp-hosts")
	if err := os.WriteFile(e.hostsFile, []byte(hosts), 0o644); err != nil {
		return err
	}
	for _, c := range []*cluster.Cluster{e.a, e.b} {
		cl, err := c.Client(e.su)
		if err != nil {
			return err
		}
		for _, d := range []string{"/ckpt", "/base", "/evalbase", "/tmp/newtricks-mirror", "/tmp/distcp"} {
			if err := cl.MkdirAll(d, 0o777); err != nil {
				return err
			}
			if err := cl.Chmod(d, 0o1777); err != nil {
				return err
			}
		}
		cl.Close()
	}
	mc, err := mirrorclient.Dial(lay.NameNodeAPI, o.user)
	if err != nil {
		return err
	}
	defer mc.Close()
	if err := extcluster.WaitServing(ctx, func(ctx context.Context) error { _, err := mc.Status(ctx, "", ""); return err }); err != nil {
		return err
	}

	files, total := checkpointFiles(o)
	// The link's time for the checkpoint: its bytes at the link's rate, no protocol overhead.
	linkTime := time.Duration(float64(total) / float64(o.rate) * float64(time.Second))
	fmt.Printf("checkpoint: %d files, %.1f MiB (%d x ~%d B + %d x %d MiB); the link's time for it (bytes / rate): %.2fs; the writer takes %v x that\n",
		len(files), float64(total)/(1<<20), o.smallFiles, o.smallSize, o.shards, o.shardSize>>20, linkTime.Seconds(), o.speeds)
	fmt.Printf("WAN: %v RTT, %.1f MiB/s each way; trainer: %d writers; evaluator across the WAN (a): %v readers, swept; local reads on dc-b: %d readers; DistCp -m %d -strategy %s; mirror concurrency %d\n",
		o.rtt, float64(o.rate)/(1<<20), o.writers, o.readers, o.localReaders, o.distcpMaps, o.distcpStrategy, o.concurrency)
	fmt.Println("machine: 2 cores shared with other work; figures are noisy")
	if o.quick {
		fmt.Println("-quick: a development run; its figures are not the benchmark's")
	}

	var runs []run1
	if strings.Contains(o.methods, "wan") {
		for _, n := range o.readers {
			runs = append(runs, run1{method: "wan", readers: n})
		}
	}
	if strings.Contains(o.methods, "distcp") {
		runs = append(runs, run1{method: "distcp"})
	}
	if strings.Contains(o.methods, "mirror") {
		for _, s := range o.speeds {
			runs = append(runs, run1{method: "mirror", speed: s})
		}
	}
	res := map[string][]float64{}
	mres := map[float64][]mirrorResult{}
	var plotB, plotC []plot.Series
	sampled := false
	for round := 0; round < o.rounds; round++ {
		order := slices.Clone(runs)
		if round%2 == 1 {
			slices.Reverse(order)
		}
		baseDir := fmt.Sprintf("/base/job/step_%d", round)
		if err := e.write(ctx, baseDir, files, 0, nil); err != nil { // unpaced: not measured
			return fmt.Errorf("write baseline checkpoint: %w", err)
		}
		for _, r := range order {
			var d time.Duration
			var err error
			switch r.method {
			case "wan":
				d, err = e.runWAN(ctx, baseDir, files, r.readers, round, !sampled)
				sampled = true
			case "distcp":
				var s []plot.Series
				d, s, err = e.runDistCp(ctx, baseDir, files, round)
				if round == 0 {
					plotB = s
				}
			case "mirror":
				var m mirrorResult
				step := int64(round*len(o.speeds) + slices.Index(o.speeds, r.speed))
				pace := time.Duration(r.speed * float64(linkTime))
				m, err = e.runMirror(ctx, mc, files, total, round, step, pace)
				if round == 0 && r.speed == 1 {
					plotC = m.series
				}
				d = m.evalIO
				mres[r.speed] = append(mres[r.speed], m)
			}
			if err != nil {
				return fmt.Errorf("round %d %s: %w", round, r, err)
			}
			res[r.String()] = append(res[r.String()], d.Seconds())
			fmt.Printf("round %d %-12s eval_io=%.2fs\n", round, r, d.Seconds())
		}
		if err := e.rm(ctx, e.a, baseDir); err != nil {
			return err
		}
	}
	if len(plotB)+len(plotC) > 0 {
		png := filepath.Join(o.out, "bench-mirror-timeline.png")
		chart := plot.Chart{
			Title:  fmt.Sprintf("bytes on dc-b: DistCp vs newtricks mirror at 1x (%v RTT, %.0f MiB/s)", o.rtt, float64(o.rate)/(1<<20)),
			XLabel: "seconds from checkpoint complete on dc-a", XUnit: "s", YUnit: " MiB",
			Height: 560, Thick: true, Marks: []plot.Mark{{X: 0, Label: "complete on dc-a"}},
		}
		if err := chart.WritePNG(png, append(plotC, plotB...)); err != nil {
			return err
		}
		fmt.Println("timeline:", png)
	}
	fmt.Println()
	fmt.Println("evaluation job's visible I/O time (complete on dc-a -> every byte read), median (min, max) over rounds:")
	bestReaders, a := 0, 0.0
	for _, r := range runs {
		v := res[r.String()]
		md, lo, hi := stats.Range(v)
		note := ""
		if r.method == "mirror" {
			note = fmt.Sprintf("  (writer %.1fs)", r.speed*linkTime.Seconds())
		}
		fmt.Printf("  %-12s %7.2fs (%.2f, %.2f)%s\n", r, md, lo, hi, note)
		if r.method == "wan" && (bestReaders == 0 || md < a) {
			bestReaders, a = r.readers, md
		}
	}
	if bestReaders > 0 {
		fmt.Printf("baseline (a): %d readers, the lowest median of %v\n", bestReaders, o.readers)
	}
	fmt.Println()
	fmt.Println("mirror against its floor, per writer speed, median (min, max) over rounds:")
	fmt.Println("  floor = bytes not on dc-b at completion / link rate + a local read of the checkpoint on dc-b in the same round;")
	fmt.Println("  \"not on dc-b\" = checkpoint bytes - the WAN relay's bytes delivered to dc-b by completion x (checkpoint bytes / the run's link bytes);")
	fmt.Println("  checked against dc-b's NameNode (ContentSummary of /, which leaves out blocks being written: an upper bound of unsent);")
	fmt.Println("  floor_ratio = (c) / floor per round")
	ratioAt, wroteAt := map[float64]float64{}, map[float64]float64{}
	worst, worstSpeed := 0.0, 0.0
	for _, sp := range o.speeds {
		ms := mres[sp]
		if len(ms) == 0 {
			continue
		}
		var c, fl, ratio, ratioHDFS, unsent, unsentHDFS, unsentSelf, read, lag, wrote []float64
		for _, m := range ms {
			c = append(c, m.evalIO.Seconds())
			fl = append(fl, m.floor(o.rate).Seconds())
			ratio = append(ratio, m.evalIO.Seconds()/m.floor(o.rate).Seconds())
			unsent = append(unsent, float64(m.unsent)/(1<<20))
			unsentHDFS = append(unsentHDFS, float64(m.unsentHDFS)/(1<<20))
			hf := time.Duration(float64(m.unsentHDFS)/float64(o.rate)*float64(time.Second)) + m.floorRead
			ratioHDFS = append(ratioHDFS, m.evalIO.Seconds()/hf.Seconds())
			wrote = append(wrote, m.wrote.Seconds()/linkTime.Seconds())
			if m.unsentSelf >= 0 {
				unsentSelf = append(unsentSelf, float64(m.unsentSelf)/(1<<20))
			}
			read = append(read, m.floorRead.Seconds())
			lag = append(lag, m.lag.Seconds())
		}
		rg := func(v []float64) string {
			md, lo, hi := stats.Range(v)
			return fmt.Sprintf("%.2f (%.2f, %.2f)", md, lo, hi)
		}
		fmt.Printf("  %gx (writer paced at %.1fs, took %s x the link's time): c %ss, floor %ss, c/floor %s (with dc-b's NameNode's upper bound of unsent: %s); lag %ss; not on dc-b at completion %s MiB (dc-b's NameNode: %s, the mirror's Status: %s); floor's local read %ss\n",
			sp, sp*linkTime.Seconds(), rg(wrote), rg(c), rg(fl), rg(ratio), rg(ratioHDFS), rg(lag), rg(unsent), rg(unsentHDFS), rg(unsentSelf), rg(read))
		ratioAt[sp] = stats.Median(ratio)
		wroteAt[sp] = stats.Median(wrote)
		if ratioAt[sp] > worst {
			worst, worstSpeed = ratioAt[sp], sp
		}
	}
	if len(res["distcp"]) == 0 || bestReaders == 0 || len(mres[1]) == 0 {
		return fmt.Errorf("-methods %q: the BENCH line needs wan, distcp and mirror", o.methods)
	}
	b, _, _ := stats.Range(res["distcp"])
	c := stats.Median(res[run1{method: "mirror", speed: 1}.String()])
	best := min(a, b)
	fmt.Printf("ratios at 1x: wan(%d)/mirror %.1fx, distcp/mirror %.1fx, distcp/wan(%d) %.2f\n", bestReaders, a/c, b/c, bestReaders, b/a)
	var util []float64
	for _, m := range mres[1] {
		util = append(util, m.util)
	}
	u, ulo, uhi := stats.Range(util)
	fmt.Printf("link_utilization (at 1x): the mirror's bytes over the link / (link rate x the time in which more than 1 MiB closed on dc-a was not yet across), median %.2f (%.2f, %.2f)\n", u, ulo, uhi)
	var per []string
	for _, sp := range o.speeds {
		per = append(per, fmt.Sprintf("floor_ratio_%gx=%.3f wrote_%gx=%.2f", sp, ratioAt[sp], sp, wroteAt[sp]))
	}
	fmt.Printf("load average at the end: %s\n", runinfo.Load())
	fmt.Printf("BENCH mirror eval_io_reduction=%.3f floor_ratio=%.3f link_utilization=%.2f baseline_readers=%d floor_ratio_worst_at=%gx %s wan_s=%.2f distcp_s=%.2f mirror_1x_s=%.2f link_s=%.2f mib=%.1f rounds=%d quick=%t %s\n",
		1-c/best, worst, u, bestReaders, worstSpeed, strings.Join(per, " "), a, b, c, linkTime.Seconds(), float64(total)/(1<<20), o.rounds, o.quick, prov.Fields())
	return nil
}

// run1 is one measured run of a round: (a) at a reader count, (b), or (c) at a writer speed.
type run1 struct {
	method  string  // wan, distcp or mirror
	readers int     // wan: parallel readers
	speed   float64 // mirror: the writer's time in multiples of the link's time
}

func (r run1) String() string {
	switch r.method {
	case "wan":
		return fmt.Sprintf("wan/%d", r.readers)
	case "mirror":
		return fmt.Sprintf("mirror/%gx", r.speed)
	}
	return r.method
}

// mark writes one phase's wall-clock time to the -trace file (nothing without -trace).
func (e *env) mark(round int, method, phase string, t time.Time) {
	if e.traceF == nil {
		return
	}
	e.traceMu.Lock()
	fmt.Fprintf(e.traceF, "%.3f %d %s %s\n", float64(t.UnixNano())/1e9, round, method, phase)
	e.traceMu.Unlock()
}

func currentUser() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "root"
}

// write writes the checkpoint on dc-a as the trainer (-writers), spread over pace (0: as fast
// as possible), then the _SUCCESS marker. progress, if set, is called with the bytes closed.
func (e *env) write(ctx context.Context, dir string, files []file, pace time.Duration, progress func(int64)) error {
	writers := e.o.writers
	clients := make([]*hdfs.Client, writers)
	for i := range clients {
		c, err := e.a.Client(e.o.user)
		if err != nil {
			return err
		}
		defer c.Close()
		clients[i] = c
	}
	if err := clients[0].MkdirAll(dir+"/model", 0o755); err != nil {
		return err
	}
	var total int64
	for _, f := range files {
		total += int64(f.size)
	}
	began := time.Now()
	var written, closed atomic.Int64
	next := make(chan file)
	errc := make(chan error, writers)
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(cl *hdfs.Client, seed uint64) {
			defer wg.Done()
			r := rand.New(rand.NewChaCha8([32]byte{byte(seed)}))
			buf := make([]byte, 1<<20)
			for f := range next {
				if err := writeOne(cl, dir+"/"+f.rel, f.size, r, buf); err != nil {
					errc <- err
					return
				}
				if progress != nil {
					progress(closed.Add(int64(f.size)))
				}
			}
		}(clients[w], uint64(w))
	}
	for _, f := range files {
		if pace > 0 {
			// Hand out the next file when the trainer's schedule reaches its first byte.
			due := began.Add(time.Duration(float64(pace) * float64(written.Load()) / float64(total)))
			time.Sleep(time.Until(due))
		}
		select {
		case next <- f:
			written.Add(int64(f.size))
		case err := <-errc:
			close(next)
			wg.Wait()
			return err
		}
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errc:
		return err
	default:
	}
	return writeOne(clients[0], dir+"/_SUCCESS", 0, nil, nil)
}

func writeOne(cl *hdfs.Client, p string, size int, r *rand.Rand, buf []byte) error {
	if err := cl.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	w, err := cl.Create(p)
	if err != nil {
		return err
	}
	for left := size; left > 0; {
		n := min(left, len(buf))
		for i := 0; i < n; i += 8 {
			v := r.Uint64()
			for j := 0; j < 8 && i+j < n; j++ {
				buf[i+j] = byte(v >> (8 * j))
			}
		}
		if _, err := w.Write(buf[:n]); err != nil {
			return err
		}
		left -= n
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return hdfsio.CloseFile(ctx, w)
}

// readAll reads every file with n parallel readers through dial (nil: direct), checking
// sizes, and returns the bytes read.
func readAll(c *cluster.Cluster, user, dir string, files []file, n int, dial func(ctx context.Context, network, addr string) (net.Conn, error)) (int64, error) {
	var total atomic.Int64
	next := make(chan file)
	errc := make(chan error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		opts := c.ClientOptions(user)
		if dial != nil {
			opts.NamenodeDialFunc, opts.DatanodeDialFunc = dial, dial
		}
		cl, err := hdfs.NewClient(opts)
		if err != nil {
			return 0, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer cl.Close()
			buf := make([]byte, 1<<20)
			for f := range next {
				r, err := cl.Open(dir + "/" + f.rel)
				if err != nil {
					errc <- err
					return
				}
				m, err := io.CopyBuffer(io.Discard, r, buf)
				r.Close()
				if err != nil || m != int64(f.size) {
					errc <- fmt.Errorf("read %s: %d of %d bytes: %v", f.rel, m, f.size, err)
					return
				}
				total.Add(m)
			}
		}()
	}
	var err error
loop:
	for _, f := range files {
		select {
		case next <- f:
		case err = <-errc:
			break loop
		}
	}
	close(next)
	wg.Wait()
	if err == nil {
		select {
		case err = <-errc:
		default:
		}
	}
	return total.Load(), err
}

// runWAN is (a): the evaluator reads the checkpoint from dc-a across the WAN.
func (e *env) runWAN(ctx context.Context, dir string, files []file, readers, round int, sample bool) (time.Duration, error) {
	dial := wan.Dialer(e.pull.Addr())
	if sample && e.o.serialSample > 0 {
		var smalls []file
		for _, f := range files {
			if len(smalls) < e.o.serialSample && !strings.HasPrefix(f.rel, "optim/") {
				smalls = append(smalls, f)
			}
		}
		began := time.Now()
		if _, err := readAll(e.a, e.o.user, dir, smalls, 1, dial); err != nil {
			return 0, err
		}
		per := time.Since(began) / time.Duration(len(smalls))
		fmt.Printf("file-by-file reader across the WAN: %v per small file (%d sampled) -> >= %.0fs for the %d small files alone (not run in full: always slower than parallel readers)\n",
			per.Round(time.Millisecond), len(smalls), (per * time.Duration(e.o.smallFiles)).Seconds(), e.o.smallFiles)
	}
	began := time.Now()
	if _, err := readAll(e.a, e.o.user, dir, files, readers, dial); err != nil {
		return 0, err
	}
	d := time.Since(began)
	name := fmt.Sprintf("wan/%d", readers)
	e.mark(round, name, "read_begin", began)
	e.mark(round, name, "read_end", began.Add(d))
	return d, nil
}

// sampler records a counter every 100 ms.
type sampler struct {
	mu   sync.Mutex
	t    []time.Time
	v    [][]int64
	stop chan struct{}
	done chan struct{}
}

func sample(fns ...func() int64) *sampler {
	s := &sampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tk := time.NewTicker(100 * time.Millisecond)
		defer tk.Stop()
		for {
			row := make([]int64, len(fns))
			for i, f := range fns {
				row[i] = f()
			}
			s.mu.Lock()
			s.t, s.v = append(s.t, time.Now()), append(s.v, row)
			s.mu.Unlock()
			select {
			case <-s.stop:
				return
			case <-tk.C:
			}
		}
	}()
	return s
}

func (s *sampler) end() { close(s.stop); <-s.done }

// series is the sampled counter i as MiB over seconds from t0.
func (s *sampler) series(i int, t0 time.Time, name string, c color.RGBA, base int64) plot.Series {
	out := plot.Series{Name: name, Color: c}
	for k, t := range s.t {
		out.X = append(out.X, t.Sub(t0).Seconds())
		out.Y = append(out.Y, float64(s.v[k][i]-base)/(1<<20))
	}
	return out
}

// runDistCp is (b): DistCp from dc-a to dc-b started when the checkpoint completes, then a
// local read on dc-b.
func (e *env) runDistCp(ctx context.Context, dir string, files []file, round int) (time.Duration, []plot.Series, error) {
	conf, err := os.MkdirTemp("", "distcp-conf-")
	if err != nil {
		return 0, nil, err
	}
	defer os.RemoveAll(conf)
	core := map[string]string{
		"fs.defaultFS":                      "hdfs://" + e.b.NameNodeAddr(),
		"mapreduce.framework.name":          "local",
		"hadoop.tmp.dir":                    filepath.Join(conf, "tmp"),
		"mapreduce.cluster.local.dir":       filepath.Join(conf, "mr-local"),
		"dfs.client.use.datanode.hostname":  "true",
		"mapreduce.job.maps":                strconv.Itoa(e.o.distcpMaps),
		"mapreduce.local.map.tasks.maximum": strconv.Itoa(e.o.distcpMaps),
		"yarn.app.mapreduce.am.staging-dir": "/tmp/distcp",
		// The local runner keeps the job's meta folder (where -strategy dynamic's maps claim
		// chunks by rename) on the local file system: a rename there that lost the race must
		// fail as on HDFS, not fall into a copy that throws (see AtomicRenameLocalFileSystem).
		"fs.file.impl": "io.newtricks.bench.AtomicRenameLocalFileSystem",
	}
	if err := os.WriteFile(filepath.Join(conf, "core-site.xml"), cluster.SiteXML(core), 0o644); err != nil {
		return 0, nil, err
	}
	log4j := "log4j.rootLogger=WARN,console\nlog4j.appender.console=org.apache.log4j.ConsoleAppender\n" +
		"log4j.appender.console.target=System.err\nlog4j.appender.console.layout=org.apache.log4j.PatternLayout\n" +
		"log4j.appender.console.layout.ConversionPattern=%d{ISO8601} %p %c{2} [%t]: %m%n\n" +
		"log4j.logger.org.apache.hadoop.tools=INFO\nlog4j.logger.org.apache.hadoop.mapred=INFO\nlog4j.logger.org.apache.hadoop.mapreduce=INFO\nlog4j.logger.io.newtricks=INFO\n"
	if err := os.WriteFile(filepath.Join(conf, "log4j.properties"), []byte(log4j), 0o644); err != nil {
		return 0, nil, err
	}
	dst := fmt.Sprintf("/evalbase/step_%d", round)
	cp := conf + ":" + e.localMaps + ":" + filepath.Join(e.o.distcpLib, "*")
	_, nnPort, _ := net.SplitHostPort(e.a.NameNodeAddr())
	distcp := func(strategy string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, "java", "-Xmx1g", "-Djdk.net.hosts.file="+e.hostsFile,
			"-XX:+IgnoreUnrecognizedVMOptions", "--add-opens=java.base/java.lang=ALL-UNNAMED",
			"--add-opens=java.base/java.util=ALL-UNNAMED", "--add-opens=java.base/java.io=ALL-UNNAMED",
			"--add-opens=java.base/java.net=ALL-UNNAMED", "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
			"-cp", cp, "org.apache.hadoop.tools.DistCp", "-m", strconv.Itoa(e.o.distcpMaps), "-strategy", strategy,
			"hdfs://127.0.0.2:"+nnPort+dir, "hdfs://"+e.b.NameNodeAddr()+dst)
		cmd.Env = append(os.Environ(), "HADOOP_USER_NAME="+e.o.user)
		return cmd
	}
	strategy := e.o.distcpStrategy
	var out bytes.Buffer
	var before wan.Stats
	var s *sampler
	var began time.Time
	var copied time.Duration
	for {
		out.Reset()
		cmd := distcp(strategy)
		cmd.Stdout, cmd.Stderr = &out, &out
		before = e.pull.Stats()
		s = sample(func() int64 { return e.pull.Stats().Backward })
		began = time.Now()
		err = cmd.Run()
		copied = time.Since(began)
		os.WriteFile(filepath.Join(e.o.out, fmt.Sprintf("distcp-round-%d-%s.log", round, strategy)), out.Bytes(), 0o644)
		if err == nil {
			break
		}
		s.end()
		tail := out.String()
		if len(tail) > 4000 {
			tail = tail[len(tail)-4000:]
		}
		if strategy == "uniformsize" {
			return 0, nil, fmt.Errorf("distcp: %v\n%s", err, tail)
		}
		// Not a result: the run is repeated with DistCp's default strategy, and says so.
		fmt.Printf("  distcp -strategy %s failed (%v); again with the default strategy, uniformsize\n", strategy, err)
		if err := e.rm(ctx, e.b, dst); err != nil {
			return 0, nil, err
		}
		strategy = "uniformsize"
	}
	if _, err := readAll(e.b, e.o.user, dst, files, e.o.localReaders, nil); err != nil {
		s.end()
		return 0, nil, fmt.Errorf("read DistCp's copy: %w", err)
	}
	d := time.Since(began)
	s.end()
	e.mark(round, "distcp", "copy_begin", began)
	e.mark(round, "distcp", "read_begin", began.Add(copied))
	e.mark(round, "distcp", "read_end", began.Add(d))
	races := ""
	if strategy == "dynamic" {
		races = fmt.Sprintf(" (%d chunk claims lost to another map, each went on to the next chunk)",
			bytes.Count(out.Bytes(), []byte("rename lost the race")))
	}
	fmt.Printf("  distcp (-strategy %s) copied in %.2fs, local read %.2fs, %.1f MiB over the link%s\n", strategy, copied.Seconds(), (d - copied).Seconds(),
		float64(e.pull.Stats().Backward-before.Backward)/(1<<20), races)
	if err := e.rm(ctx, e.b, dst); err != nil {
		return 0, nil, err
	}
	return d, []plot.Series{s.series(0, began, "dc-b bytes, DistCp (started at complete)", color.RGBA{200, 30, 30, 255}, before.Backward)}, nil
}

// mirrorResult is one run of (c) at one writer speed.
type mirrorResult struct {
	evalIO    time.Duration // complete on dc-a -> every byte read on dc-b
	lag       time.Duration // complete -> Mirror.Wait returned committed
	read      time.Duration // the evaluator's local read after Wait
	floorRead time.Duration // a second local read of the same copy, timed alone: the floor's
	// unsent is the checkpoint's bytes not yet on dc-b at completion by the WAN relay's
	// counter (see delivered.go), the floor's; unsentHDFS the same by dc-b's NameNode (an upper
	// bound: blocks being written are left out); unsentSelf by the mirror's own Status
	// (BytesDone), printed, never used.
	unsent, unsentHDFS, unsentSelf int64
	wrote                          time.Duration // the trainer's actual write time
	util                           float64
	series                         []plot.Series
}

// floor is the least evaluation-visible I/O time any mirror could give this run: the bytes
// still to cross at completion at the link's rate, then the local read.
func (m mirrorResult) floor(rate int64) time.Duration {
	return time.Duration(float64(m.unsent)/float64(rate)*float64(time.Second)) + m.floorRead
}

// runMirror is (c): the trainer writes the checkpoint on dc-a over pace while namenode-ext
// mirrors it; the evaluator waits on Mirror.Wait from the moment it completes, then reads it
// locally on dc-b. At completion the bytes already on dc-b are taken from dc-b's DataNodes, off
// the evaluator's path; after the evaluator's read the copy is read again, timed, as the floor's
// local read.
func (e *env) runMirror(ctx context.Context, mc *mirrorclient.Client, files []file, total int64, round int, step int64, pace time.Duration) (mirrorResult, error) {
	var m mirrorResult
	job := "bench"
	dir := fmt.Sprintf("/ckpt/%s/step_%d", job, step)
	name := fmt.Sprintf("mirror/%.2fs", pace.Seconds())
	bcl, err := e.b.Client(e.su)
	if err != nil {
		return m, err
	}
	defer bcl.Close()
	dcb0, err := dcbStored(bcl)
	if err != nil {
		return m, fmt.Errorf("dc-b's content summary: %w", err)
	}
	var closed atomic.Int64
	before := e.push.Stats().Forward
	s := sample(func() int64 { return closed.Load() }, func() int64 { return e.push.Stats().Forward - before })
	defer func() {
		if s != nil {
			s.end()
		}
	}()
	writeBegan := time.Now()
	if err := e.write(ctx, dir, files, pace, func(n int64) { closed.Store(n) }); err != nil {
		return m, err
	}
	complete := time.Now()
	linkAt := e.push.Stats().Forward - before
	// The snapshot of dc-b runs beside the evaluator: it is not on the timed path, and what
	// the mirror delivers while it runs only makes "unsent" smaller (a lower floor).
	type snap struct {
		stored, self int64
		took         time.Duration
		err          error
	}
	snapc := make(chan snap, 1)
	go func() {
		var sn snap
		n, err := dcbStored(bcl)
		sn.stored, sn.took, sn.err = n-dcb0, time.Since(complete), err
		sn.self = -1
		if st, err := mc.Status(ctx, "ck", job); err == nil {
			for _, cp := range st.Checkpoints {
				if cp.Ref.Step == step {
					sn.self = cp.BytesDone
				}
			}
		}
		snapc <- sn
	}()
	cp, err := mc.Wait(ctx, mirrorclient.Ref{Job: job, Step: step}, 200*time.Millisecond, nil)
	if err != nil {
		return m, err
	}
	m.lag = time.Since(complete)
	if _, err := readAll(e.b, e.o.user, cp.DestPath, files, e.o.localReaders, nil); err != nil {
		return m, fmt.Errorf("read the mirror: %w", err)
	}
	m.evalIO = time.Since(complete)
	m.read = m.evalIO - m.lag
	s.end()
	ss := s
	s = nil
	sn := <-snapc
	if sn.err != nil {
		return m, fmt.Errorf("dc-b's content summary at completion: %w", sn.err)
	}
	dcbEnd, err := dcbStored(bcl)
	if err != nil {
		return m, fmt.Errorf("dc-b's content summary: %w", err)
	}
	linkEnd := e.push.Stats().Forward - before
	floorBegan := time.Now()
	if _, err := readAll(e.b, e.o.user, cp.DestPath, files, e.o.localReaders, nil); err != nil {
		return m, fmt.Errorf("read the mirror again (the floor's local read): %w", err)
	}
	m.floorRead = time.Since(floorBegan)
	m.wrote = complete.Sub(writeBegan)
	delivered := linkAt
	if linkEnd > 0 {
		delivered = int64(float64(linkAt) * float64(total) / float64(linkEnd))
	}
	m.unsent = max(0, total-delivered)
	m.unsentHDFS = max(0, total-sn.stored)
	m.unsentSelf = -1
	if sn.self >= 0 {
		m.unsentSelf = max(0, total-sn.self)
	}
	e.mark(round, name, "write_begin", writeBegan)
	e.mark(round, name, "complete", complete)
	e.mark(round, name, "read_begin", complete.Add(m.lag))
	e.mark(round, name, "read_end", complete.Add(m.evalIO))
	// Link utilisation while closed files waited: intervals with more than 1 MiB closed on
	// dc-a and not yet across the link.
	var busyBytes, busySecs float64
	ss.mu.Lock()
	for k := 1; k < len(ss.t); k++ {
		backlog := ss.v[k-1][0] - ss.v[k-1][1]
		if backlog > 1<<20 {
			busyBytes += float64(ss.v[k][1] - ss.v[k-1][1])
			busySecs += ss.t[k].Sub(ss.t[k-1]).Seconds()
		}
	}
	ss.mu.Unlock()
	if busySecs > 0 {
		m.util = busyBytes / busySecs / float64(e.o.rate)
	}
	fmt.Printf("  mirror: trainer wrote for %.1fs (paced at %.1fs); committed %.2fs after complete (lag), local read %.2fs; link busy %.1fs at %.2f of capacity; %.1f MiB over the link for %.1f MiB of data\n",
		complete.Sub(writeBegan).Seconds(), pace.Seconds(), m.lag.Seconds(), m.read.Seconds(), busySecs, m.util,
		float64(e.push.Stats().Forward-before)/(1<<20), float64(total)/(1<<20))
	fmt.Printf("  mirror: at completion %.1f MiB not on dc-b (link counter %.1f of %.1f MiB sent in the run, scaled to data); dc-b's NameNode: %.1f MiB not in its file lengths (read %.0f ms after completion; blocks being written left out), %.1f MiB grown by the end; the mirror's Status: %s not done; floor's local read %.2fs -> floor %.2fs, c/floor %.3f\n",
		float64(m.unsent)/(1<<20), float64(linkAt)/(1<<20), float64(linkEnd)/(1<<20), float64(m.unsentHDFS)/(1<<20),
		float64(sn.took)/float64(time.Millisecond), float64(dcbEnd-dcb0)/(1<<20), mib(m.unsentSelf),
		m.floorRead.Seconds(), m.floor(e.o.rate).Seconds(), m.evalIO.Seconds()/m.floor(e.o.rate).Seconds())
	if m.unsentHDFS+1<<20 < m.unsent {
		fmt.Printf("  mirror: CHECK FAILED: dc-b's NameNode shows %.1f MiB more on dc-b at completion than the link counter\n", float64(m.unsent-m.unsentHDFS)/(1<<20))
	}
	if m.evalIO < m.floor(e.o.rate) {
		fmt.Println("  mirror: CHECK FAILED: (c) below its floor, so the floor is wrong")
	}
	if float64(m.wrote) > 1.1*float64(pace) {
		fmt.Printf("  mirror: the trainer took %.1fs for a pace of %.1fs (%.2fx the link's time, not the speed asked): the machine could not write faster\n",
			m.wrote.Seconds(), pace.Seconds(), float64(m.wrote)/float64(time.Duration(float64(total)/float64(e.o.rate)*float64(time.Second))))
	}
	m.series = []plot.Series{
		ss.series(0, complete, "dc-a bytes closed by the trainer", color.RGBA{120, 120, 120, 255}, 0),
		ss.series(1, complete, "dc-b bytes, newtricks mirror (during the write)", color.RGBA{30, 90, 200, 255}, 0),
	}
	return m, nil
}

// mib formats n bytes in MiB, or "unknown" for a negative n.
func mib(n int64) string {
	if n < 0 {
		return "unknown"
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// buildLocalMaps compiles java/ManyMapsLocalProvider.java into a jar that registers it as a
// MapReduce ClientProtocolProvider (see there: the local runner otherwise forces one map), with
// java/AtomicRenameLocalFileSystem.java (DistCp's fs.file.impl: see there).
func buildLocalMaps(base, lib string) (string, error) {
	var srcs []string
	for _, name := range []string{"ManyMapsLocalProvider.java", "AtomicRenameLocalFileSystem.java"} {
		src, err := filepath.Abs(filepath.Join("bench", "mirror", "java", name))
		if err != nil {
			return "", err
		}
		srcs = append(srcs, src)
	}
	classes := filepath.Join(base, "localmaps")
	svc := filepath.Join(classes, "META-INF", "services")
	if err := os.MkdirAll(svc, 0o755); err != nil {
		return "", err
	}
	if out, err := exec.Command("javac", append([]string{"-nowarn", "-cp", filepath.Join(lib, "*"), "-d", classes}, srcs...)...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("javac %v: %v\n%s", srcs, err, out)
	}
	if err := os.WriteFile(filepath.Join(svc, "org.apache.hadoop.mapreduce.protocol.ClientProtocolProvider"),
		[]byte("io.newtricks.bench.ManyMapsLocalProvider\n"), 0o644); err != nil {
		return "", err
	}
	jar := filepath.Join(base, "newtricks-local-maps.jar")
	if out, err := exec.Command("jar", "cf", jar, "-C", classes, ".").CombinedOutput(); err != nil {
		return "", fmt.Errorf("jar: %v\n%s", err, out)
	}
	return jar, nil
}

func (e *env) rm(ctx context.Context, c *cluster.Cluster, p string) error {
	cl, err := c.Client(e.su)
	if err != nil {
		return err
	}
	defer cl.Close()
	if err := cl.RemoveAll(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
