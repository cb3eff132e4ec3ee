// Command hotspot measures the initialization I/O storm of issue 4 on a real cluster: many
// readers (each its own HDFS client, as ranks are) all load the same hot files, whose blocks
// sit on few DataNodes at replication 3, from DataNodes whose reads are throttled with
// dfs.datanode.data.read.bandwidthPerSec so that DataNode bandwidth, not this machine's CPU,
// is the bottleneck. It times the barrier (the slowest reader) for three runs on three
// identical sets of files:
//
//   - baseline: replication 3;
//   - setrep: `hdfs dfs -setrep -w <factor>` (Hadoop's FsShell) issued when the storm starts,
//     what an admin would do, with stock re-replication limits;
//   - hint: a newtricks hint sent --lead before the storm.
//
// The blocks are made to sit on three DataNodes by writing them while the other DataNodes are
// stopped. It prints the physical limit (bytes read / aggregate throttled bandwidth of all
// DataNodes) and, as its last line, `BENCH hotspot barrier_reduction=<1-hint/baseline>
// ready_s=<hint to ready>`.
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/colinmarc/hdfs/v2"

	"github.com/newtricks/newtricks/internal/cluster"
	"github.com/newtricks/newtricks/internal/exttest"
	"github.com/newtricks/newtricks/namenode-ext/hotspot"
	"github.com/newtricks/newtricks/namenode-ext/hotspot/hintclient"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

type options struct {
	dataNodes int
	bandwidth int64
	readers   int
	files     int
	fileBytes int64
	blockSize int64
	lead      time.Duration
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
	flag.Parse()
	if o.dataNodes < 4 {
		log.Fatal("need at least 4 DataNodes")
	}
	if err := run(o); err != nil {
		log.Fatal(err)
	}
}

const user0 = "trainer"

func run(o options) (err error) {
	a, err := exttest.ArtifactsFromEnv()
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
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()

	bw := fmt.Sprint(o.bandwidth)
	cfg, lay, err := exttest.Setup(a, base, exttest.Options{Name: "bench-hotspot", DataNodes: o.dataNodes,
		HDFSSite: map[string]string{
			"dfs.datanode.data.read.bandwidthPerSec":     bw,
			"dfs.datanode.data.transfer.bandwidthPerSec": bw,
		},
		NameNodeSite: map[string]string{
			"newtricks.hotspot.allowed-prefixes": "/bench",
			"newtricks.hotspot.poll-interval":    "250ms",
		}})
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

	// Three identical sets of hot files, written while only DataNodes 0-2 run, so every block
	// of every set has its three replicas there.
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
	w, err := c.Client(user0)
	if err != nil {
		return err
	}
	sets := []string{"baseline", "setrep", "hint"}
	data := make([]byte, o.fileBytes)
	if _, err := rand.Read(data); err != nil {
		return err
	}
	files := map[string][]string{}
	for _, s := range sets {
		for f := 0; f < o.files; f++ {
			name := fmt.Sprintf("/bench/%s/part-%03d", s, f)
			if err := writeRetry(ctx, c, name, data, o.blockSize); err != nil {
				return err
			}
			files[s] = append(files[s], name)
		}
	}
	w.Close()
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
	fmt.Printf("hotspot bench: %d DataNodes read-throttled at %s/s each, %d readers (own clients), %d hot files of %s (%s blocks), %s read per storm\n",
		o.dataNodes, human(o.bandwidth), o.readers, o.files, human(o.fileBytes), human(o.blockSize), human(total))
	fmt.Printf("physical limit: %.1f s (bytes read / aggregate throttled bandwidth of all DataNodes); one replica set of 3 DataNodes: %.1f s\n",
		limit, float64(total)/float64(3*o.bandwidth))

	baseline, err := storm(ctx, c, o, files["baseline"])
	if err != nil {
		return fmt.Errorf("baseline: %w", err)
	}
	fmt.Printf("replication 3:             barrier %6.1f s  (mean reader %5.1f s)\n", baseline.barrier.Seconds(), baseline.mean.Seconds())

	// The hint decides the factor; setrep uses the same one, so only the timing differs.
	hc, err := hintclient.Dial(lay.NameNodeAPI, user0)
	if err != nil {
		return err
	}
	defer hc.Close()
	dry, err := createHint(ctx, hc, hintclient.Hint{Paths: []string{"/bench/hint"}, In: o.lead, For: 10 * time.Minute,
		Readers: o.readers, DryRun: true})
	if err != nil {
		return fmt.Errorf("plan: %w", err)
	}
	factor := dry.Files[0].Target

	setrepDone := make(chan error, 1)
	sr, err := stormWith(ctx, c, o, files["setrep"], func() {
		go func() { setrepDone <- setrep(ctx, c, a, su.Username, factor, "/bench/setrep") }()
	})
	if err != nil {
		return fmt.Errorf("setrep: %w", err)
	}
	if err := <-setrepDone; err != nil {
		return fmt.Errorf("setrep: %w", err)
	}
	fmt.Printf("setrep -w %-2d at storm:     barrier %6.1f s  (mean reader %5.1f s)\n", factor, sr.barrier.Seconds(), sr.mean.Seconds())

	sent := time.Now()
	plan, err := createHint(ctx, hc, hintclient.Hint{Paths: []string{"/bench/hint"}, In: o.lead, For: 10 * time.Minute, Readers: o.readers})
	if err != nil {
		return fmt.Errorf("hint: %w", err)
	}
	readyCh := make(chan time.Duration, 1)
	go func() {
		st, err := hc.WaitReady(ctx, plan.HintID, 100*time.Millisecond)
		if err != nil {
			log.Printf("hint never ready: %v", err)
			readyCh <- -1
			return
		}
		readyCh <- st.ReadyAt.Sub(sent)
	}()
	time.Sleep(time.Until(sent.Add(o.lead)))
	hr, err := storm(ctx, c, o, files["hint"])
	if err != nil {
		return fmt.Errorf("hint storm: %w", err)
	}
	ready := <-readyCh
	if _, err := hc.Done(ctx, plan.HintID); err != nil {
		log.Printf("done: %v", err)
	}
	fmt.Printf("hint %v before (-> %-2d):   barrier %6.1f s  (mean reader %5.1f s), ready %.1f s after the hint, estimated %.1f s\n",
		o.lead, factor, hr.barrier.Seconds(), hr.mean.Seconds(), ready.Seconds(), plan.EstimatedReady.Sub(sent).Seconds())
	fmt.Printf("barrier vs replication 3: setrep %.3f, hint %.3f of baseline; hint barrier / physical limit %.2f\n",
		sr.barrier.Seconds()/baseline.barrier.Seconds(), hr.barrier.Seconds()/baseline.barrier.Seconds(), hr.barrier.Seconds()/limit)
	fmt.Printf("BENCH hotspot barrier_reduction=%.3f ready_s=%.1f\n", 1-hr.barrier.Seconds()/baseline.barrier.Seconds(), ready.Seconds())
	return nil
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
		cl, err := c.Client(user0)
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

// setrep runs Hadoop's own `hdfs dfs -setrep -w` as the superuser.
func setrep(ctx context.Context, c *cluster.Cluster, a exttest.Artifacts, su string, factor int, path string) error {
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
func blockNodes(ctx context.Context, lay exttest.Layout, files map[string][]string) (int, error) {
	ns, conn, err := exttest.NamespaceClient(lay)
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
