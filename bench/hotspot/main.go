// Command hotspot measures the initialization I/O storm on a real cluster: many readers (each
// its own HDFS client, as ranks are) all load the same hot files, whose blocks sit on three
// DataNodes at replication 3, from DataNodes whose reads and transfers are throttled with
// dfs.datanode.data.{read,transfer}.bandwidthPerSec so that DataNode bandwidth, not this
// machine's CPU, is the bottleneck. It times the barrier (the slowest reader) of four cases,
// each on its own identical set of files:
//
//   - rep3: replication 3;
//   - setrep-storm: `hdfs dfs -setrep -w <factor>` (Hadoop's FsShell) issued when the storm
//     starts, what an admin would do, with stock re-replication limits;
//   - setrep-ahead: the same command sent --lead before the storm, stock limits (the fair
//     control: the same lead time as the hint, without newtricks);
//   - hint: a newtricks hint sent --lead before the storm (limits boosted while copying,
//     balanced reads when -balanced).
//
// The cases run --reps times, in alternating order (forward, then backward), and each is
// reported as median (min, max), with how evenly the DataNodes served the storm (the busiest
// DataNode's bytes read over the mean, from each DataNode's DataNodeActivity.BytesRead) and,
// for the setrep cases, when every block had its replicas (polled every 250 ms; `setrep -w`
// itself only looks every 10 s). The blocks are made to sit on three DataNodes by writing them
// while the other DataNodes are stopped. It fails if a hint does not get ready. It prints the
// physical limit (bytes read / aggregate throttled bandwidth of all DataNodes), the redundancy
// interval in force, the floor of vs_setrep_ahead that the physical limit sets against this
// run's setrep-ahead median, and as its last line
// `BENCH hotspot barrier_reduction=<1-hint/rep3> vs_setrep_ahead=<hint/setrep-ahead>
// ready_s=<median hint to ready> barrier_vs_limit=<hint/physical limit>`.
//
// With -scale N it instead measures what one hint of N files costs the NameNode (scale.go).
package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/colinmarc/hdfs/v2"

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
	flag.IntVar(&o.reps, "reps", 3, "repetitions of the four cases (alternating order)")
	flag.IntVar(&o.interval, "redundancy-interval", 1, "dfs.namenode.redundancy.interval.seconds and dfs.heartbeat.interval (stock: 3)")
	flag.StringVar(&o.readerAddr, "reader-addr", "127.0.0.2", "local address readers reach the NameNode from (not a DataNode's, as a trainer host is not one; empty: the default)")
	flag.BoolVar(&o.balanced, "balanced", true, "install io.newtricks.hadoop.BalancedReads on the NameNode (hinted files only)")
	scale := flag.Int("scale", 0, "instead of the storm: measure one hint of this many files on 3 DataNodes")
	scaleWatch := flag.Duration("scale-watch", 20*time.Second, "with -scale: readiness rounds watched before done")
	flag.Parse()
	if *scale > 0 {
		if err := runScale(*scale, *scaleWatch); err != nil {
			log.Fatal(err)
		}
		return
	}
	if o.dataNodes < 4 {
		log.Fatal("need at least 4 DataNodes")
	}
	if err := run(o); err != nil {
		log.Fatal(err)
	}
}

const user0 = "trainer"

var cases = []string{"rep3", "setrep-storm", "setrep-ahead", "hint"}

func run(o options) (err error) {
	if o.reps < 1 {
		return fmt.Errorf("-reps %d < 1", o.reps)
	}
	a, err := extcluster.ArtifactsFromEnv()
	if err != nil {
		return err
	}
	su, err := user.Current()
	if err != nil {
		return err
	}
	base, err := os.MkdirTemp("", "bench-hotspot-")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Minute)
	defer cancel()

	bw := fmt.Sprint(o.bandwidth)
	iv := fmt.Sprint(o.interval)
	nnSite := map[string]string{
		"newtricks.hotspot.allowed-prefixes": "/bench",
		"newtricks.hotspot.poll-interval":    "250ms",
	}
	if o.balanced {
		nnSite["dfs.net.topology.impl"] = "io.newtricks.hadoop.BalancedReads$Topology"
		nnSite["dfs.namenode.audit.loggers"] = "default," + extcluster.AuditLoggerClass + ",io.newtricks.hadoop.BalancedReads$AuditHook"
	}
	cfg, lay, err := extcluster.Setup(a, base, extcluster.Options{Name: "bench-hotspot", DataNodes: o.dataNodes,
		HDFSSite: map[string]string{
			"dfs.datanode.data.read.bandwidthPerSec":     bw,
			"dfs.datanode.data.transfer.bandwidthPerSec": bw,
			"dfs.namenode.redundancy.interval.seconds":   iv,
			"dfs.heartbeat.interval":                     iv,
		},
		NameNodeSite: nnSite})
	if err != nil {
		return err
	}
	cfg.StartupTimeout = 6 * time.Minute // 13 JVMs on a small shared machine
	start := time.Now()
	c, err := cluster.Start(ctx, cfg)
	if err != nil {
		return fmt.Errorf("start cluster: %w", err)
	}
	defer func() {
		ok := err == nil
		if err := c.Stop(); err != nil {
			log.Printf("stop: %v", err)
		}
		os.RemoveAll(lay.SocketDir)
		if ok {
			os.RemoveAll(base)
		} else {
			log.Printf("logs kept in %s", base)
		}
	}()
	log.Printf("cluster of %d DataNodes up in %v", o.dataNodes, time.Since(start).Round(time.Second))

	// One identical set of hot files per case and repetition, written while only DataNodes
	// 0-2 run, so every block of every set has its three replicas there.
	for i := 3; i < o.dataNodes; i++ {
		if err := c.StopDataNode(i); err != nil {
			return err
		}
	}
	for i := 3; i < o.dataNodes; i++ {
		if err := c.WaitDataNodeDead(ctx, i); err != nil {
			return err
		}
	}
	root, err := c.Client(su.Username)
	if err != nil {
		return err
	}
	defer root.Close()
	if err := root.MkdirAll("/bench", 0o755); err != nil {
		return err
	}
	if err := root.Chown("/bench", user0, user0); err != nil {
		return err
	}
	data := make([]byte, o.fileBytes)
	if _, err := rand.Read(data); err != nil {
		return err
	}
	setDir := func(cs string, rep int) string { return fmt.Sprintf("/bench/%s-%d", cs, rep) }
	files := map[string][]string{}
	for rep := 0; rep < o.reps; rep++ {
		for _, cs := range cases {
			dir := setDir(cs, rep)
			for f := 0; f < o.files; f++ {
				name := fmt.Sprintf("%s/part-%03d", dir, f)
				if err := writeRetry(ctx, c, name, data, o.blockSize); err != nil {
					return err
				}
				files[dir] = append(files[dir], name)
			}
		}
	}
	if n, err := blockNodes(ctx, lay, files); err != nil || n > 3 {
		return fmt.Errorf("hot blocks on %d DataNodes, want 3 (%v)", n, err)
	}
	for i := 3; i < o.dataNodes; i++ {
		if err := c.StartDataNode(ctx, i); err != nil {
			return err
		}
	}
	if err := c.WaitLive(ctx, o.dataNodes); err != nil {
		return err
	}

	hot := int64(o.files) * o.fileBytes
	total := hot * int64(o.readers)
	limit := float64(total) / float64(int64(o.dataNodes)*o.bandwidth)
	fmt.Printf("hotspot bench: %d DataNodes read/transfer-throttled at %s/s each, %d readers (own clients), %d hot files of %s (%s blocks), %s read per storm\n",
		o.dataNodes, human(o.bandwidth), o.readers, o.files, human(o.fileBytes), human(o.blockSize), human(total))
	fmt.Printf("dfs.namenode.redundancy.interval.seconds=%d and dfs.heartbeat.interval=%d (stock: 3 and 3); balanced reads: %v; %d repetitions, alternating order; load average %s\n",
		o.interval, o.interval, o.balanced, o.reps, loadAverage())
	fmt.Printf("physical limit: %.1f s (bytes read / aggregate throttled bandwidth of all DataNodes); one replica set of 3 DataNodes: %.1f s\n",
		limit, float64(total)/float64(3*o.bandwidth))

	// The hint decides the factor; setrep uses the same one, so only the mechanism differs.
	hc, err := hintclient.Dial(lay.NameNodeAPI, user0)
	if err != nil {
		return err
	}
	defer hc.Close()
	dry, err := createHint(ctx, hc, hintclient.Hint{Paths: []string{setDir("hint", 0)}, In: o.lead, For: 10 * time.Minute,
		Readers: o.readers, DryRun: true})
	if err != nil {
		return fmt.Errorf("plan: %w", err)
	}
	factor := dry.Files[0].Target

	barriers := map[string][]float64{}
	shares := map[string][]float64{}
	readyOf := map[string][]float64{}
	var readies []float64
	served, err := bytesRead(ctx, c, true)
	if err != nil {
		return err
	}
	for rep := 0; rep < o.reps; rep++ {
		order := append([]string(nil), cases...)
		if rep%2 == 1 {
			slices.Reverse(order)
		}
		for _, cs := range order {
			dir := setDir(cs, rep)
			var r result
			var ready time.Duration
			switch cs {
			case "rep3":
				r, err = storm(ctx, c, o, files[dir])
			case "setrep-storm":
				done := make(chan error, 1)
				var rd *readiness
				r, err = stormWith(ctx, c, o, files[dir], func() {
					rd = watchReady(ctx, lay, files[dir], min(factor, o.dataNodes))
					go func() { done <- setrep(ctx, c, a, su.Username, factor, dir) }()
				})
				if serr := <-done; err == nil && serr != nil {
					err = serr
				}
				if err == nil {
					ready, err = rd.wait()
				}
			case "setrep-ahead":
				done := make(chan error, 1)
				sent := time.Now()
				rd := watchReady(ctx, lay, files[dir], min(factor, o.dataNodes))
				go func() { done <- setrep(ctx, c, a, su.Username, factor, dir) }()
				time.Sleep(time.Until(sent.Add(o.lead)))
				r, err = storm(ctx, c, o, files[dir])
				if serr := <-done; err == nil && serr != nil {
					err = serr
				}
				if err == nil {
					ready, err = rd.wait()
				}
			case "hint":
				r, ready, err = hintCase(ctx, c, o, hc, dir, files[dir])
				readies = append(readies, ready.Seconds())
			}
			if err != nil {
				return fmt.Errorf("%s (rep %d): %w", cs, rep, err)
			}
			barriers[cs] = append(barriers[cs], r.barrier.Seconds())
			now, err := bytesRead(ctx, c, true)
			if err != nil {
				return err
			}
			share := maxOverMean(served, now)
			served = now
			shares[cs] = append(shares[cs], share)
			extra := ""
			switch cs {
			case "hint":
				extra = fmt.Sprintf(", ready %.1f s after the hint", ready.Seconds())
			case "setrep-storm", "setrep-ahead":
				extra = fmt.Sprintf(", every block at %d replicas %.1f s after the setrep", min(factor, o.dataNodes), ready.Seconds())
			}
			if cs != "rep3" {
				readyOf[cs] = append(readyOf[cs], ready.Seconds())
			}
			fmt.Printf("rep %d %-13s barrier %6.1f s  (mean reader %5.1f s)  busiest DataNode served %.2fx the mean%s\n",
				rep, cs, r.barrier.Seconds(), r.mean.Seconds(), share, extra)
		}
	}
	med := map[string]float64{}
	for _, cs := range cases {
		m, lo, hi := stats.Range(barriers[cs])
		med[cs] = m
		label := cs
		if cs != "rep3" {
			label = fmt.Sprintf("%s (-> %d)", cs, factor)
		}
		sm, slo, shi := stats.Range(shares[cs])
		rdy := ""
		if rs := readyOf[cs]; len(rs) > 0 {
			rm, rlo, rhi := stats.Range(rs)
			rdy = fmt.Sprintf("  ready %.1f s (%.1f, %.1f) after it was sent", rm, rlo, rhi)
		}
		fmt.Printf("%-22s barrier median %6.1f s (min %5.1f, max %5.1f)  vs rep3 %.3f  vs limit %.2f  busiest/mean DataNode %.2f (%.2f, %.2f)%s\n",
			label, m, lo, hi, m/med["rep3"], m/limit, sm, slo, shi, rdy)
	}
	fmt.Printf("floor: at the physical limit %.1f s (a DataNode's throttle lets short bursts above it) vs_setrep_ahead would be %.3f against this run's setrep-ahead median (%.1f s, ready %.1f s after it was sent, storm at %v); the hint is at %.2fx the limit; load average %s\n",
		limit, limit/med["setrep-ahead"], med["setrep-ahead"], first(stats.Range(readyOf["setrep-ahead"])), o.lead, med["hint"]/limit, loadAverage())
	rm, rlo, rhi := stats.Range(readies)
	fmt.Printf("hint ready: median %.1f s (min %.1f, max %.1f) after it was sent, lead %v\n", rm, rlo, rhi, o.lead)
	fmt.Printf("BENCH hotspot barrier_reduction=%.3f vs_setrep_ahead=%.3f ready_s=%.1f barrier_vs_limit=%.2f\n",
		1-med["hint"]/med["rep3"], med["hint"]/med["setrep-ahead"], rm, med["hint"]/limit)
	return nil
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

func first(a, _, _ float64) float64 { return a }

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

// bytesRead reads DataNodeActivity.BytesRead of every DataNode (client reads, not replication
// transfers), after the JMX view refreshed (metrics2 refreshes it at most every 10 s) if fresh.
func bytesRead(ctx context.Context, c *cluster.Cluster, fresh bool) (map[int]float64, error) {
	if fresh {
		time.Sleep(11 * time.Second)
	}
	out := map[int]float64{}
	for _, dn := range c.DataNodes() {
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
}

func storm(ctx context.Context, c *cluster.Cluster, o options, files []string) (result, error) {
	return stormWith(ctx, c, o, files, func() {})
}

// stormWith connects every reader first (each its own client), then releases them all at once,
// calls atStart, and waits for the slowest.
func stormWith(ctx context.Context, c *cluster.Cluster, o options, files []string, atStart func()) (result, error) {
	clients := make([]*hdfs.Client, o.readers)
	for i := range clients {
		cl, err := readerClient(c, o.readerAddr)
		if err != nil {
			return result{}, err
		}
		defer cl.Close()
		clients[i] = cl
	}
	var wg sync.WaitGroup
	gate := make(chan struct{})
	took := make([]time.Duration, o.readers)
	errs := make([]error, o.readers)
	var t0 time.Time
	for i, cl := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			buf := make([]byte, 1<<20)
			for _, name := range files {
				f, err := cl.Open(name)
				if err != nil {
					errs[i] = err
					return
				}
				n, err := io.CopyBuffer(io.Discard, f, buf)
				f.Close()
				if err == nil && n != o.fileBytes {
					err = fmt.Errorf("%s: read %d bytes, want %d", name, n, o.fileBytes)
				}
				if err != nil {
					errs[i] = err
					return
				}
			}
			took[i] = time.Since(t0)
		}()
	}
	t0 = time.Now()
	atStart()
	close(gate)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return result{}, err
	}
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	var sum time.Duration
	for _, d := range took {
		sum += d
	}
	return result{barrier: took[len(took)-1], mean: sum / time.Duration(len(took))}, ctx.Err()
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
	deadline := time.Now().Add(2 * time.Minute)
	for {
		p, err := c.Create(ctx, h)
		if !errors.Is(err, hotspot.ErrUnavailable) || time.Now().After(deadline) {
			return p, err
		}
		time.Sleep(500 * time.Millisecond)
	}
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
