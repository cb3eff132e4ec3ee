package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log"
	"os"
	"os/user"
	"slices"
	"sync"
	"time"

	"github.com/colinmarc/hdfs/v2"

	"github.com/newtricks/newtricks/harness/cluster"
	"github.com/newtricks/newtricks/harness/extcluster"
	"github.com/newtricks/newtricks/namenode-ext/hotspot"
)

// The steps every mode of the bench shares (the storm, -failover and -scale), in one copy so
// that the modes measure the same thing the same way.

// benchEnv is what every mode starts from: the artifacts from the environment, the user the
// bench runs as (the cluster's superuser) and a fresh directory for the cluster.
type benchEnv struct {
	a    extcluster.Artifacts
	su   *user.User
	base string
}

// newBenchEnv reads the artifacts and the current user and makes the cluster's directory,
// named after prefix.
func newBenchEnv(prefix string) (benchEnv, error) {
	var e benchEnv
	var err error
	if e.a, err = extcluster.ArtifactsFromEnv(); err != nil {
		return e, err
	}
	if e.su, err = user.Current(); err != nil {
		return e, err
	}
	if e.base, err = os.MkdirTemp("", prefix); err != nil {
		return e, err
	}
	return e, nil
}

// stormOptions is the cluster of a storm (the default bench and -failover): o.dataNodes
// DataNodes whose reads and transfers are throttled at o.bandwidth, the redundancy and
// heartbeat intervals at o.interval, namenode-ext allowed under /bench and polling every
// 250 ms, BalancedReads installed with o.balanced; nnExtra adds to the NameNode's site.
func stormOptions(o options, name string, nnExtra map[string]string, ha *cluster.HAConfig) extcluster.Options {
	bw, iv := fmt.Sprint(o.bandwidth), fmt.Sprint(o.interval)
	nnSite := map[string]string{
		"newtricks.hotspot.allowed-prefixes": "/bench",
		"newtricks.hotspot.poll-interval":    "250ms",
	}
	for k, v := range nnExtra {
		nnSite[k] = v
	}
	if o.balanced {
		nnSite["dfs.net.topology.impl"] = "io.newtricks.hadoop.BalancedReads$Topology"
		nnSite["dfs.namenode.audit.loggers"] = "default," + extcluster.AuditLoggerClass + ",io.newtricks.hadoop.BalancedReads$AuditHook"
	}
	return extcluster.Options{Name: name, DataNodes: o.dataNodes,
		HDFSSite: map[string]string{
			"dfs.datanode.data.read.bandwidthPerSec":     bw,
			"dfs.datanode.data.transfer.bandwidthPerSec": bw,
			"dfs.namenode.redundancy.interval.seconds":   iv,
			"dfs.heartbeat.interval":                     iv,
		},
		NameNodeSite: nnSite, HA: ha}
}

// startCluster sets up and starts the cluster of eo under e.base (what names it in the error)
// and returns it with its stop: stop(keep) stops every process, removes the socket directory
// and removes e.base unless keep, in which case it says where the logs are. startup, if not
// 0, is the cluster's startup timeout.
func startCluster(ctx context.Context, e benchEnv, eo extcluster.Options, startup time.Duration, what string) (*cluster.Cluster, extcluster.Layout, func(keep bool), error) {
	cfg, lay, err := extcluster.Setup(e.a, e.base, eo)
	if err != nil {
		return nil, lay, nil, err
	}
	if startup > 0 {
		cfg.StartupTimeout = startup
	}
	c, err := cluster.Start(ctx, cfg)
	if err != nil {
		return nil, lay, nil, fmt.Errorf("start %s: %w", what, err)
	}
	stop := func(keep bool) {
		if err := c.Stop(); err != nil {
			log.Printf("stop: %v", err)
		}
		os.RemoveAll(lay.SocketDir)
		if !keep {
			os.RemoveAll(e.base)
		} else {
			log.Printf("logs kept in %s", e.base)
		}
	}
	return c, lay, stop, nil
}

// benchRoot is a client as the superuser su, with dir made and given to user0 (the readers'
// and the hints' user). The caller closes it.
func benchRoot(c *cluster.Cluster, su, dir string) (*hdfs.Client, error) {
	root, err := c.Client(su)
	if err != nil {
		return nil, err
	}
	if err := root.MkdirAll(dir, 0o755); err != nil {
		root.Close()
		return nil, err
	}
	if err := root.Chown(dir, user0, user0); err != nil {
		root.Close()
		return nil, err
	}
	return root, nil
}

// writeHotSets writes o.files files of o.fileBytes random bytes (the same bytes in every
// file) into each of dirs, in that order, while only DataNodes 0-2 run, so that every block
// of every set has its three replicas there; the other DataNodes stay stopped (the caller
// starts the ones it wants). It returns each dir's files and a superuser client (/bench made
// and given to user0), which the caller closes.
func writeHotSets(ctx context.Context, c *cluster.Cluster, o options, su string, dirs []string) (map[string][]string, *hdfs.Client, error) {
	for i := 3; i < o.dataNodes; i++ {
		if err := c.StopDataNode(i); err != nil {
			return nil, nil, err
		}
	}
	for i := 3; i < o.dataNodes; i++ {
		if err := c.WaitDataNodeDead(ctx, i); err != nil {
			return nil, nil, err
		}
	}
	root, err := benchRoot(c, su, "/bench")
	if err != nil {
		return nil, nil, err
	}
	data := make([]byte, o.fileBytes)
	if _, err := rand.Read(data); err != nil {
		root.Close()
		return nil, nil, err
	}
	files := map[string][]string{}
	for _, dir := range dirs {
		for f := 0; f < o.files; f++ {
			name := fmt.Sprintf("%s/part-%03d", dir, f)
			if err := writeRetry(ctx, c, name, data, o.blockSize); err != nil {
				root.Close()
				return nil, nil, err
			}
			files[dir] = append(files[dir], name)
		}
	}
	return files, root, nil
}

// readers connects o.readers readers first (each its own client), then releases them all at
// once, calls atStart, and waits for the slowest; each runs read with its client. The result
// is the slowest reader's time (the barrier) and the mean.
func readers(ctx context.Context, c *cluster.Cluster, o options, atStart func(), read func(cl *hdfs.Client) error) (result, error) {
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
			if err := read(cl); err != nil {
				errs[i] = err
				return
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
	var sum, top time.Duration
	for _, d := range took {
		sum += d
		top = max(top, d)
	}
	return result{barrier: top, mean: sum / time.Duration(len(took)), took: took}, ctx.Err()
}

// eachCase runs every case reps times, in alternating order (forward, then backward): run
// measures one case of one repetition and returns its report, which eachCase calls with how
// evenly the DataNodes served that storm (the busiest DataNode's bytes read over the mean).
// An error of run is returned naming the case and repetition.
func eachCase(ctx context.Context, c *cluster.Cluster, reps int, cases []string, run func(rep int, cs string) (report func(share float64), err error)) error {
	served, err := bytesRead(ctx, c, true)
	if err != nil {
		return err
	}
	for rep := 0; rep < reps; rep++ {
		order := append([]string(nil), cases...)
		if rep%2 == 1 {
			slices.Reverse(order)
		}
		for _, cs := range order {
			report, err := run(rep, cs)
			if err != nil {
				return fmt.Errorf("%s (rep %d): %w", cs, rep, err)
			}
			now, err := bytesRead(ctx, c, true)
			if err != nil {
				return err
			}
			share := maxOverMean(served, now)
			served = now
			report(share)
		}
	}
	return nil
}

// whileUnavailable calls f every `every` while it fails with hotspot.ErrUnavailable
// (namenode-ext starting, or recovering after a failover), for at most 2 minutes.
func whileUnavailable[T any](every time.Duration, f func() (T, error)) (T, error) {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		v, err := f()
		if !errors.Is(err, hotspot.ErrUnavailable) || time.Now().After(deadline) {
			return v, err
		}
		time.Sleep(every)
	}
}
