package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/colinmarc/hdfs/v2"

	"github.com/newtricks/newtricks/bench/internal/runinfo"
	"github.com/newtricks/newtricks/harness/cluster"
	"github.com/newtricks/newtricks/harness/extcluster"
	"github.com/newtricks/newtricks/internal/hdfsio"
	"github.com/newtricks/newtricks/namenode-ext/hotspot/hintclient"
)

// runScale measures what one hint of n files costs the NameNode on a real cluster: the time to
// plan and raise, to poll readiness and to restore, the host calls namenode-ext made (its
// host_calls_total and host_call_seconds_total metrics; these calls run inside the NameNode,
// not over its RPC port) and the edit-log transactions the NameNode wrote (JMX
// FSNamesystem.LastWrittenTransactionId), per file. The files are 1 byte at replication 1, so
// the hint raises each to 3.
func runScale(n int, watch time.Duration) (err error) {
	ri := runinfo.Start()
	e, err := newBenchEnv("bench-hotspot-scale-")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	c, lay, stop, err := startCluster(ctx, e, extcluster.Options{Name: "bench-hotspot-scale", DataNodes: 3,
		NameNodeSite: map[string]string{
			"newtricks.hotspot.allowed-prefixes": "/scale",
			"newtricks.hotspot.poll-interval":    "1s",
			"newtricks.hotspot.max-files":        strconv.Itoa(n),
		}}, 0, "cluster")
	if err != nil {
		return err
	}
	defer func() { stop(err != nil || os.Getenv("BENCH_KEEP_LOGS") != "") }()
	root, err := benchRoot(c, e.su.Username, "/scale")
	if err != nil {
		return err
	}
	defer root.Close()
	t0 := time.Now()
	if err := writeTiny(c, n, 8); err != nil {
		return err
	}
	log.Printf("wrote %d files of 1 byte in %v", n, time.Since(t0).Round(time.Second))

	hc, err := hintclient.Dial(lay.NameNodeAPI, user0)
	if err != nil {
		return err
	}
	defer hc.Close()
	// Wait for namenode-ext to be up (a dry run answers once it has recovered).
	if _, err := createHint(ctx, hc, hintclient.Hint{Paths: []string{"/scale/d0/f0"}, For: time.Minute, Readers: 1, DryRun: true}); err != nil {
		return err
	}
	before, err := snapshot(ctx, c, lay)
	if err != nil {
		return err
	}
	t1 := time.Now()
	plan, err := createHint(ctx, hc, hintclient.Hint{Paths: []string{"/scale"}, For: time.Hour, Readers: 6, Replication: 3})
	if err != nil {
		return err
	}
	created := time.Since(t1)
	if len(plan.Files) != n || plan.Partial {
		return fmt.Errorf("plan of %d files (partial %v, skipped %d %+v), want %d", len(plan.Files), plan.Partial,
			len(plan.Skipped)+plan.SkippedOmitted, plan.Skipped[:min(3, len(plan.Skipped))], n)
	}
	afterCreate, err := snapshot(ctx, c, lay)
	if err != nil {
		return err
	}
	time.Sleep(watch) // readiness rounds while the NameNode copies
	st, err := hc.Status(ctx, plan.HintID)
	if err != nil {
		return err
	}
	ready := 0
	for _, f := range st.Files {
		if f.Ready {
			ready++
		}
	}
	afterWatch, err := snapshot(ctx, c, lay)
	if err != nil {
		return err
	}
	t2 := time.Now()
	if _, err := hc.Done(ctx, plan.HintID); err != nil {
		return err
	}
	done := time.Since(t2)
	afterDone, err := snapshot(ctx, c, lay)
	if err != nil {
		return err
	}
	// Spot-check the result.
	for _, i := range []int{0, n / 2, n - 1} {
		name := tinyName(i)
		r, err := replication(root, name)
		if err != nil || r != 1 {
			return fmt.Errorf("%s factor %d after done (%v), want 1", name, r, err)
		}
	}

	fmt.Printf("hotspot scale: one hint of %d files (1 byte, factor 1 -> 3) on 3 DataNodes; machine shared\n", n)
	phase := func(name string, d time.Duration, a, b metricsSnap) {
		calls := b.sub(a)
		fmt.Printf("%-10s %8.2f s  %6.3f ms/file  edit-log txns %7d (%.2f/file)  host calls %s\n", name, d.Seconds(),
			d.Seconds()*1000/float64(n), b.txid-a.txid, float64(b.txid-a.txid)/float64(n), calls)
	}
	phase("create", created, before, afterCreate)
	phase("readiness", watch, afterCreate, afterWatch)
	phase("done", done, afterWatch, afterDone)
	fmt.Printf("files ready after %v of copying: %d of %d\n", watch, ready, n)
	fmt.Printf("BENCH hotspot_scale files=%d create_ms_per_file=%.3f done_ms_per_file=%.3f txns_per_file=%.2f %s\n", n,
		created.Seconds()*1000/float64(n), done.Seconds()*1000/float64(n),
		float64((afterCreate.txid-before.txid)+(afterDone.txid-afterWatch.txid))/float64(n), ri.Fields())
	return nil
}

func tinyName(i int) string { return fmt.Sprintf("/scale/d%d/f%d", i/1000, i) }

// writeTiny writes n files of one byte at replication 1 with w writers.
func writeTiny(c *cluster.Cluster, n, w int) error {
	var wg sync.WaitGroup
	errs := make(chan error, w)
	for k := 0; k < w; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl, err := c.Client(user0)
			if err != nil {
				errs <- err
				return
			}
			defer cl.Close()
			for i := k; i < n; i += w {
				name := tinyName(i)
				if i%1000 < w {
					if err := cl.MkdirAll(name[:strings.LastIndex(name, "/")], 0o755); err != nil {
						errs <- err
						return
					}
				}
				f, err := cl.CreateFile(name, 1, 1<<20, 0o644)
				if err == nil {
					_, err = f.Write([]byte{'x'})
					cerr := f.Close()
					// The block may not be reported yet: Close again until it completes.
					for try := 0; hdfs.IsErrReplicating(cerr) && try < 50; try++ {
						time.Sleep(100 * time.Millisecond)
						cerr = f.Close()
					}
					if err == nil {
						err = cerr
					}
				}
				if err != nil {
					errs <- fmt.Errorf("write %s: %w", name, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// metricsSnap is the NameNode's last edit-log transaction id and namenode-ext's host call
// counters at one time.
type metricsSnap struct {
	txid    int64
	calls   map[string]float64
	seconds map[string]float64
}

func (b metricsSnap) sub(a metricsSnap) string {
	var ops []string
	for op := range b.calls {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	var parts []string
	for _, op := range ops {
		if d := b.calls[op] - a.calls[op]; d > 0 {
			parts = append(parts, fmt.Sprintf("%s=%.0f (%.0f ms)", op, d, (b.seconds[op]-a.seconds[op])*1000))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}

// snapshot reads both after the JMX cache has refreshed.
func snapshot(ctx context.Context, c *cluster.Cluster, lay extcluster.Layout) (metricsSnap, error) {
	time.Sleep(11 * time.Second) // metrics2 JMX views refresh at most every 10 s
	s := metricsSnap{calls: map[string]float64{}, seconds: map[string]float64{}}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+c.NameNodeHTTPAddr()+"/jmx?qry=Hadoop:service=NameNode,name=FSNamesystem", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return s, err
	}
	var body struct {
		Beans []map[string]any `json:"beans"`
	}
	err = json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if err != nil || len(body.Beans) == 0 {
		return s, fmt.Errorf("FSNamesystem bean: %v", err)
	}
	v, ok := body.Beans[0]["LastWrittenTransactionId"].(float64)
	if !ok {
		return s, fmt.Errorf("no LastWrittenTransactionId in FSNamesystem bean")
	}
	s.txid = int64(v)
	req, _ = http.NewRequestWithContext(ctx, http.MethodGet, "http://"+lay.NameNodeMetrics+"/metrics", nil)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		for _, m := range []struct {
			prefix string
			dst    map[string]float64
		}{{"newtricks_hotspot_host_calls_total{op=\"", s.calls}, {"newtricks_hotspot_host_call_seconds_total{op=\"", s.seconds}} {
			if rest, ok := strings.CutPrefix(line, m.prefix); ok {
				op, val, _ := strings.Cut(rest, "\"} ")
				f, _ := strconv.ParseFloat(val, 64)
				m.dst[op] = f
			}
		}
	}
	return s, sc.Err()
}

// replication returns the replication factor of name.
func replication(c *hdfs.Client, name string) (int, error) { return hdfsio.Replication(c, name) }
