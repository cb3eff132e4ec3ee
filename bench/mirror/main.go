// Command bench-mirror measures what checkpoint mirroring saves an evaluation job in another
// data centre (`make bench-mirror`). Two real clusters run on loopback, dc-a (training, with
// namenode-ext mirroring) and dc-b (evaluation); every connection that crosses between them goes
// through the WAN emulator (harness/wan: one-way delay, shared bandwidth cap). A simulated
// trainer writes a checkpoint of many ~15 KB tensors plus a few multi-MB shards on dc-a. The
// evaluation job's visible I/O time, from "checkpoint complete on dc-a" to "evaluator has read
// every byte", is measured for:
//
//	(a) wan:     reading it from dc-a across the WAN, 16 parallel readers (a file-by-file
//	             reader is measured on a sample and extrapolated: it is always slower);
//	(b) distcp:  real DistCp (hadoop-distcp 3.4.2, local job runner, -m 16 -strategy dynamic)
//	             started when the checkpoint completes, then reading it locally on dc-b;
//	(c) mirror:  newtricks mirroring during the write, the evaluator waiting on Mirror.Wait,
//	             then reading locally on dc-b.
//
// Rounds interleave the three in alternating order. The last line is
// "BENCH mirror eval_io_reduction=<1 - c / min(a, b)> link_utilization=<fraction>", where link
// utilisation is the mirror's bytes over the link divided by the link's capacity during the
// intervals in which closed files were waiting to be mirrored.
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
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/colinmarc/hdfs/v2"

	"github.com/newtricks/newtricks/bench/internal/plot"
	"github.com/newtricks/newtricks/bench/internal/stats"
	"github.com/newtricks/newtricks/harness/cluster"
	"github.com/newtricks/newtricks/harness/extcluster"
	"github.com/newtricks/newtricks/harness/wan"
	"github.com/newtricks/newtricks/namenode-ext/mirror/mirrorclient"
)

type options struct {
	out                string
	rounds             int
	smallFiles         int
	smallSize          int
	shards             int
	shardSize          int
	writeFor           time.Duration
	rtt                time.Duration
	rate               int64
	readers            int
	distcpMaps         int
	distcpStrategy     string
	concurrency        int
	serialSample       int
	distcpLib, user    string
	methods            string
	hadoopLib, cliPath string
	trace              string
}

func main() {
	var o options
	flag.StringVar(&o.out, "out", ".", "directory for the log and the PNG timeline")
	flag.IntVar(&o.rounds, "rounds", 3, "rounds (each runs a, b and c, order alternating)")
	flag.IntVar(&o.smallFiles, "small-files", 1990, "~15 KB tensor files per checkpoint")
	flag.IntVar(&o.smallSize, "small-size", 15000, "mean size of a small file")
	flag.IntVar(&o.shards, "shards", 10, "multi-MB shard files per checkpoint")
	flag.IntVar(&o.shardSize, "shard-size", 30<<20, "size of a shard file")
	flag.DurationVar(&o.writeFor, "write-for", 30*time.Second, "how long the simulated trainer takes to write a checkpoint")
	flag.DurationVar(&o.rtt, "rtt", 40*time.Millisecond, "emulated WAN round-trip time")
	flag.Int64Var(&o.rate, "rate", 20<<20, "emulated WAN bandwidth, bytes/s each way")
	flag.IntVar(&o.readers, "readers", 16, "parallel readers of the evaluator")
	flag.IntVar(&o.distcpMaps, "maps", 16, "DistCp -m")
	flag.StringVar(&o.distcpStrategy, "distcp-strategy", "dynamic", "DistCp -strategy: dynamic hands files to maps in small chunks, as an operator copying many small files would choose (the default, uniformsize, splits by bytes: one map gets the ~1,000 small files and copies them one by one)")
	flag.IntVar(&o.concurrency, "concurrency", 128, "newtricks.mirror.concurrency")
	flag.StringVar(&o.methods, "methods", "wan,distcp,mirror", "which of wan, distcp, mirror to run (a quick look; the BENCH line needs all three)")
	flag.IntVar(&o.serialSample, "serial-sample", 50, "files read one by one across the WAN to extrapolate the file-by-file reader")
	flag.StringVar(&o.trace, "trace", "", "also write each phase's wall-clock time (unix s, round, method, phase) to this file, to line the evaluator's windows up with a system sampler")
	flag.Parse()
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
	fmt.Printf("checkpoint: %d files, %.1f MiB (%d x ~%d B + %d x %d MiB), written over %v\n",
		len(files), float64(total)/(1<<20), o.smallFiles, o.smallSize, o.shards, o.shardSize>>20, o.writeFor)
	fmt.Printf("WAN: %v RTT, %.1f MiB/s each way; evaluator: %d readers; DistCp -m %d -strategy %s; mirror concurrency %d\n",
		o.rtt, float64(o.rate)/(1<<20), o.readers, o.distcpMaps, o.distcpStrategy, o.concurrency)
	fmt.Println("machine: 2 cores shared with other work; figures are noisy")

	res := map[string][]float64{}
	var util []float64
	var plotB, plotC []plot.Series
	for round := 0; round < o.rounds; round++ {
		order := []string{"wan", "distcp", "mirror"}
		if round%2 == 1 {
			order = []string{"mirror", "distcp", "wan"}
		}
		baseDir := fmt.Sprintf("/base/job/step_%d", round)
		if err := e.write(ctx, baseDir, files, 0, nil); err != nil { // unpaced: not measured
			return fmt.Errorf("write baseline checkpoint: %w", err)
		}
		for _, m := range order {
			if !strings.Contains(o.methods, m) {
				continue
			}
			var d time.Duration
			switch m {
			case "wan":
				d, err = e.runWAN(ctx, baseDir, files, round, round == 0)
			case "distcp":
				var s []plot.Series
				d, s, err = e.runDistCp(ctx, baseDir, files, round)
				if round == 0 {
					plotB = s
				}
			case "mirror":
				var s []plot.Series
				var u float64
				d, s, u, err = e.runMirror(ctx, mc, files, total, round)
				if round == 0 {
					plotC = s
				}
				util = append(util, u)
			}
			if err != nil {
				return fmt.Errorf("round %d %s: %w", round, m, err)
			}
			res[m] = append(res[m], d.Seconds())
			fmt.Printf("round %d %-6s eval_io=%.2fs\n", round, m, d.Seconds())
		}
		if err := e.rm(ctx, e.a, baseDir); err != nil {
			return err
		}
	}
	png := filepath.Join(o.out, "bench-mirror-timeline.png")
	chart := plot.Chart{
		Title:  fmt.Sprintf("bytes on dc-b: DistCp vs newtricks mirror (%v RTT, %.0f MiB/s)", o.rtt, float64(o.rate)/(1<<20)),
		XLabel: "seconds from checkpoint complete on dc-a", XUnit: "s", YUnit: " MiB",
		Height: 560, Thick: true, Marks: []plot.Mark{{X: 0, Label: "complete on dc-a"}},
	}
	if err := chart.WritePNG(png, append(plotC, plotB...)); err != nil {
		return err
	}
	fmt.Println("timeline:", png)
	fmt.Println()
	fmt.Println("evaluation job's visible I/O time (complete on dc-a -> every byte read), median (min, max):")
	for _, m := range []string{"wan", "distcp", "mirror"} {
		md, lo, hi := stats.Range(res[m])
		fmt.Printf("  %-7s %7.2fs (%.2f, %.2f)\n", m, md, lo, hi)
	}
	a, _, _ := stats.Range(res["wan"])
	b, _, _ := stats.Range(res["distcp"])
	c, _, _ := stats.Range(res["mirror"])
	if len(res["wan"]) == 0 || len(res["distcp"]) == 0 || len(res["mirror"]) == 0 {
		return fmt.Errorf("-methods %q: the BENCH line needs wan, distcp and mirror", o.methods)
	}
	best := min(a, b)
	fmt.Printf("ratios: wan/mirror %.1fx, distcp/mirror %.1fx, distcp/wan %.2f\n", a/c, b/c, b/a)
	u, ulo, uhi := stats.Range(util)
	fmt.Printf("mirror link utilisation while files were waiting: median %.2f (%.2f, %.2f)\n", u, ulo, uhi)
	fmt.Printf("BENCH mirror eval_io_reduction=%.3f link_utilization=%.2f\n", 1-c/best, u)
	return nil
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

// write writes the checkpoint on dc-a as the trainer (4 writers), spread over pace (0: as fast
// as possible), then the _SUCCESS marker. progress, if set, is called with the bytes closed.
func (e *env) write(ctx context.Context, dir string, files []file, pace time.Duration, progress func(int64)) error {
	const writers = 4
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
	for i := 0; ; i++ {
		err = w.Close()
		if err == nil || !hdfs.IsErrReplicating(err) || i > 100 {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
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
func (e *env) runWAN(ctx context.Context, dir string, files []file, round int, sample bool) (time.Duration, error) {
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
		fmt.Printf("file-by-file reader across the WAN: %v per small file (%d sampled) -> >= %.0fs for the %d small files alone (not run in full: always slower than 16 readers)\n",
			per.Round(time.Millisecond), len(smalls), (per * time.Duration(e.o.smallFiles)).Seconds(), e.o.smallFiles)
	}
	began := time.Now()
	if _, err := readAll(e.a, e.o.user, dir, files, e.o.readers, dial); err != nil {
		return 0, err
	}
	d := time.Since(began)
	e.mark(round, "wan", "read_begin", began)
	e.mark(round, "wan", "read_end", began.Add(d))
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
	if _, err := readAll(e.b, e.o.user, dst, files, e.o.readers, nil); err != nil {
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

// runMirror is (c): the trainer writes the checkpoint on dc-a while namenode-ext mirrors it; the
// evaluator waits on Mirror.Wait from the moment it completes, then reads it locally on dc-b.
func (e *env) runMirror(ctx context.Context, mc *mirrorclient.Client, files []file, total int64, round int) (time.Duration, []plot.Series, float64, error) {
	job := "bench"
	step := int64(round)
	dir := fmt.Sprintf("/ckpt/%s/step_%d", job, step)
	var closed atomic.Int64
	before := e.push.Stats().Forward
	s := sample(func() int64 { return closed.Load() }, func() int64 { return e.push.Stats().Forward - before })
	writeBegan := time.Now()
	if err := e.write(ctx, dir, files, e.o.writeFor, func(n int64) { closed.Store(n) }); err != nil {
		s.end()
		return 0, nil, 0, err
	}
	complete := time.Now()
	cp, err := mc.Wait(ctx, mirrorclient.Ref{Job: job, Step: step}, 200*time.Millisecond, nil)
	if err != nil {
		s.end()
		return 0, nil, 0, err
	}
	committed := time.Since(complete)
	if _, err := readAll(e.b, e.o.user, cp.DestPath, files, e.o.readers, nil); err != nil {
		s.end()
		return 0, nil, 0, fmt.Errorf("read the mirror: %w", err)
	}
	d := time.Since(complete)
	s.end()
	e.mark(round, "mirror", "write_begin", writeBegan)
	e.mark(round, "mirror", "complete", complete)
	e.mark(round, "mirror", "read_begin", complete.Add(committed))
	e.mark(round, "mirror", "read_end", complete.Add(d))
	// Link utilisation while closed files waited: intervals with more than 1 MiB closed on
	// dc-a and not yet across the link.
	var busyBytes, busySecs float64
	s.mu.Lock()
	for k := 1; k < len(s.t); k++ {
		backlog := s.v[k-1][0] - s.v[k-1][1]
		if backlog > 1<<20 {
			busyBytes += float64(s.v[k][1] - s.v[k-1][1])
			busySecs += s.t[k].Sub(s.t[k-1]).Seconds()
		}
	}
	s.mu.Unlock()
	util := 0.0
	if busySecs > 0 {
		util = busyBytes / busySecs / float64(e.o.rate)
	}
	fmt.Printf("  mirror: trainer wrote for %.1fs; committed %.2fs after complete (lag), local read %.2fs; link busy %.1fs at %.2f of capacity; %.1f MiB over the link for %.1f MiB of data\n",
		complete.Sub(writeBegan).Seconds(), committed.Seconds(), (d - committed).Seconds(), busySecs, util,
		float64(e.push.Stats().Forward-before)/(1<<20), float64(total)/(1<<20))
	ss := []plot.Series{
		s.series(0, complete, "dc-a bytes closed by the trainer", color.RGBA{120, 120, 120, 255}, 0),
		s.series(1, complete, "dc-b bytes, newtricks mirror (during the write)", color.RGBA{30, 90, 200, 255}, 0),
	}
	return d, ss, util, nil
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
