package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"sync"
	"sync/atomic"
	"time"

	"github.com/colinmarc/hdfs/v2"

	"github.com/newtricks/newtricks/bench/internal/plot"
	"github.com/newtricks/newtricks/bench/internal/runinfo"
	"github.com/newtricks/newtricks/bench/internal/stats"
	"github.com/newtricks/newtricks/harness/cluster"
	"github.com/newtricks/newtricks/internal/hdfsio"
	"github.com/newtricks/newtricks/namenode-ext/hotspot"
	"github.com/newtricks/newtricks/namenode-ext/hotspot/hintclient"
)

// runFailover is `-failover` (issue 22 item 7): on an HA pair (two NameNodes over three
// JournalNodes, ZooKeeper and a ZKFC each, the hooks and namenode-ext beside both), the
// readers storm a hinted set; in one case the active NameNode is killed -9 -kill-after into
// the storm, in the other nothing happens. Both cases use the same readers, which retry a
// failed open or read after 100 ms from where they stopped (colinmarc/hdfs fails over
// between the two NameNodes itself but returns "no available namenodes" while neither is
// active), and run -reps times in alternating order. It reports the barrier of both, the time
// from the kill to the other NameNode active, and from that to its namenode-ext answering
// the hint's status (the hint recovered from its record) and accepting a new hint (a dry
// run). After each failover storm it checks that the files are still raised, ends the hint
// through the new active's namenode-ext, checks that every file is back at 3, and starts the
// killed NameNode again (standby). Last line: `BENCH hotspot_failover barrier_s=
// failover_barrier_s= failover_vs_plain= kill_to_active_s= active_to_hints_s=
// active_to_create_s= reader_retries= ...` with the run's commit and load.
func runFailover(o options) (err error) {
	ri := runinfo.Start()
	e, err := newBenchEnv("bench-hotspot-failover-")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Hour)
	defer cancel()
	start := time.Now()
	c, lay, stop, err := startCluster(ctx, e, stormOptions(o, "bench-hotfo",
		map[string]string{"newtricks.ext.restart.backoff.max.ms": "1000"}, &cluster.HAConfig{Nameservice: "hotfo"}),
		6*time.Minute, "HA cluster")
	if err != nil {
		return err
	}
	defer func() { stop(err != nil) }()
	log.Printf("HA cluster (2 NameNodes, %d DataNodes) up in %v", o.dataNodes, time.Since(start).Round(time.Second))
	var hcs [2]*hintclient.Client
	for i := range hcs {
		if hcs[i], err = hintclient.Dial(lay.NameNodeAPIs[i], user0); err != nil {
			return err
		}
		defer hcs[i].Close()
	}

	// The hot sets, written while only DataNodes 0-2 run (as in the storm without failover).
	cases := []string{"hint", "hint-failover"}
	setDir := func(cs string, rep int) string { return fmt.Sprintf("/bench/%s-%d", cs, rep) }
	var dirs []string
	for rep := 0; rep < o.reps; rep++ {
		for _, cs := range cases {
			dirs = append(dirs, setDir(cs, rep))
		}
	}
	files, root, err := writeHotSets(ctx, c, o, e.su.Username, dirs)
	if err != nil {
		return err
	}
	defer root.Close()
	for i := 3; i < o.dataNodes; i++ {
		if err := c.StartDataNode(ctx, i); err != nil {
			return err
		}
	}
	if err := c.WaitLive(ctx, o.dataNodes); err != nil {
		return err
	}
	total := int64(o.files) * o.fileBytes * int64(o.readers)
	limit := float64(total) / float64(int64(o.dataNodes)*o.bandwidth)
	fmt.Printf("hotspot failover bench on %s (dirty %v): HA pair, %d DataNodes throttled at %s/s, %d readers, %d files of %s (%s blocks), %s per storm, physical limit %.1f s, hint %v ahead, kill -9 of the active NameNode %v into the storm; %d repetitions, alternating order; load average %s\n",
		ri.Commit, ri.Dirty, o.dataNodes, human(o.bandwidth), o.readers, o.files, human(o.fileBytes), human(o.blockSize), human(total), limit, o.lead, o.killAfter, o.reps, ri.LoadStart)

	barriers := map[string][]float64{}
	storms := map[string][]result{}
	var toActive, toHints, toCreate, retries []float64
	err = eachCase(ctx, c, o.reps, cases, func(rep int, cs string) (func(share float64), error) {
		dir := setDir(cs, rep)
		f, err := failoverCase(ctx, c, o, hcs, dir, files[dir], cs == "hint-failover")
		if err != nil {
			return nil, err
		}
		barriers[cs] = append(barriers[cs], f.barrier.Seconds())
		storms[cs] = append(storms[cs], f.result)
		return func(share float64) {
			extra := ""
			if f.killed {
				toActive, toHints, toCreate = append(toActive, f.toActive.Seconds()), append(toHints, f.toHints.Seconds()), append(toCreate, f.toCreate.Seconds())
				retries = append(retries, float64(f.retries))
				extra = fmt.Sprintf(", killed namenode %d at %.1f s: namenode %d active %.2f s after the kill, its namenode-ext answered the hint %.3f s and took a new hint %.3f s after it was active; %d reader retries; files still raised, restored to 3 after done",
					f.killedNN, o.killAfter.Seconds(), 1-f.killedNN, f.toActive.Seconds(), f.toHints.Seconds(), f.toCreate.Seconds(), f.retries)
			}
			fmt.Printf("rep %d %-14s barrier %6.1f s (mean reader %5.1f s), hint ready %.1f s after it was sent, busiest DataNode %.2fx the mean%s\n",
				rep, cs, f.barrier.Seconds(), f.mean.Seconds(), f.ready.Seconds(), share, extra)
		}, nil
	})
	if err != nil {
		return err
	}
	if o.png != "" {
		p := o.png + "-failover.png"
		marks := []plot.Mark{{X: limit, Label: "physical limit"}, {X: o.killAfter.Seconds(), Label: "kill -9"}}
		if err := writeStormPlot(p, "HA pair, kill -9 of the active NameNode", cases, storms, marks); err != nil {
			return err
		}
		fmt.Printf("plot: %s\n", p)
	}
	pm, plo, phi := stats.Range(barriers["hint"])
	fm, flo, fhi := stats.Range(barriers["hint-failover"])
	am, alo, ahi := stats.Range(toActive)
	hm, hlo, hhi := stats.Range(toHints)
	cm, clo, chi := stats.Range(toCreate)
	rm, _, _ := stats.Range(retries)
	fmt.Printf("hint without failover: barrier median %.1f s (%.1f, %.1f); with a kill -9 of the active %v into the storm: %.1f s (%.1f, %.1f), %.3fx\n",
		pm, plo, phi, o.killAfter, fm, flo, fhi, fm/pm)
	fmt.Printf("kill -9 to the other NameNode active: %.2f s (%.2f, %.2f); then to hints answering: %.3f s (%.3f, %.3f), to a new hint taken: %.3f s (%.3f, %.3f) (target <= 5 s)\n",
		am, alo, ahi, hm, hlo, hhi, cm, clo, chi)
	fmt.Printf("BENCH hotspot_failover barrier_s=%.1f failover_barrier_s=%.1f failover_vs_plain=%.3f kill_to_active_s=%.2f active_to_hints_s=%.3f active_to_create_s=%.3f reader_retries=%.0f reps=%d datanodes=%d readers=%d %s\n",
		pm, fm, fm/pm, am, hm, cm, rm, o.reps, o.dataNodes, o.readers, ri.Fields())
	return nil
}

type failoverResult struct {
	result
	ready                       time.Duration
	killed                      bool
	killedNN                    int
	toActive, toHints, toCreate time.Duration
	retries                     int64
}

// failoverCase sends a hint through the active NameNode's namenode-ext, starts the storm at
// the lead or once the hint is ready, whichever is later (so both cases start from the same
// replicas), and with kill kills the active NameNode -kill-after into the storm and times
// the takeover.
func failoverCase(ctx context.Context, c *cluster.Cluster, o options, hcs [2]*hintclient.Client, dir string, files []string, kill bool) (failoverResult, error) {
	var fr failoverResult
	act, err := c.WaitActive(ctx)
	if err != nil {
		return fr, err
	}
	sent := time.Now()
	plan, err := createHint(ctx, hcs[act], hintclient.Hint{Paths: []string{dir}, In: o.lead, For: 10 * time.Minute, Readers: o.readers})
	if err != nil {
		return fr, fmt.Errorf("hint: %w", err)
	}
	target := plan.Files[0].Target
	wctx, wcancel := context.WithTimeout(ctx, o.lead+2*time.Minute)
	st, err := hcs[act].WaitReady(wctx, plan.HintID, 100*time.Millisecond)
	wcancel()
	if err != nil {
		return fr, fmt.Errorf("hint %s never ready: %w", plan.HintID, err)
	}
	fr.ready = st.ReadyAt.Sub(sent)
	time.Sleep(time.Until(sent.Add(o.lead)))

	var killErr error
	var killDone sync.WaitGroup
	stormEnded := make(chan struct{})
	r, retries, err := stormRetry(ctx, c, o, files, func() {
		if !kill {
			return
		}
		killDone.Add(1)
		go func() {
			defer killDone.Done()
			select {
			case <-time.After(o.killAfter):
			case <-stormEnded:
				killErr = fmt.Errorf("the storm ended before the kill at %v: raise -readers or -file-bytes, or lower -kill-after", o.killAfter)
				return
			}
			fr.killed, fr.killedNN = true, act
			fr.toActive, fr.toHints, fr.toCreate, killErr = killAndTime(ctx, c, hcs, act, plan.HintID, dir, o.readers)
		}()
	})
	close(stormEnded)
	killDone.Wait()
	if err == nil {
		err = killErr
	}
	if err != nil {
		return fr, err
	}
	fr.result, fr.retries = r, retries
	now, err := c.WaitActive(ctx)
	if err != nil {
		return fr, err
	}
	// The hint still holds the files at its target, and ends through whichever namenode-ext
	// is active now.
	for _, name := range files {
		if got, err := replicationRetry(ctx, c, name); err != nil || got != target {
			return fr, fmt.Errorf("%s at replication %d after the storm (%v), want %d (still raised)", name, got, err, target)
		}
	}
	if _, err := doneRetry(ctx, hcs[now], plan.HintID); err != nil {
		return fr, fmt.Errorf("done: %w", err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for _, name := range files {
		for {
			got, err := replicationRetry(ctx, c, name)
			if err == nil && got == 3 {
				break
			}
			if time.Now().After(deadline) {
				return fr, fmt.Errorf("%s at replication %d 2 min after done (%v), want 3", name, got, err)
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
	if fr.killed {
		if err := c.StartNameNode(ctx, fr.killedNN); err != nil {
			return fr, fmt.Errorf("start namenode %d again: %w", fr.killedNN, err)
		}
	}
	return fr, nil
}

// killAndTime kills NameNode act (-9, with its co-processes), polls the other every 50 ms
// until it is active, then until its namenode-ext answers the hint's status (recovered) and
// takes a new hint (a dry run of the same set).
func killAndTime(ctx context.Context, c *cluster.Cluster, hcs [2]*hintclient.Client, act int, id, dir string, readers int) (toActive, toHints, toCreate time.Duration, err error) {
	other := 1 - act
	killed := time.Now()
	if err := c.KillNameNode(act); err != nil {
		return 0, 0, 0, err
	}
	deadline := killed.Add(3 * time.Minute)
	var activeAt time.Time
	for activeAt.IsZero() {
		if s, err := c.NameNodeState(ctx, other); err == nil && s == cluster.StateActive {
			activeAt = time.Now()
			break
		}
		if time.Now().After(deadline) {
			return 0, 0, 0, fmt.Errorf("namenode %d not active 3 min after the kill of %d", other, act)
		}
		time.Sleep(50 * time.Millisecond)
	}
	var hintsAt, createAt time.Time
	for hintsAt.IsZero() || createAt.IsZero() {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		if hintsAt.IsZero() {
			if _, err := hcs[other].Status(cctx, id); err == nil {
				hintsAt = time.Now()
			} else if !errors.Is(err, hotspot.ErrUnavailable) && cctx.Err() == nil {
				cancel()
				return 0, 0, 0, fmt.Errorf("status of hint %s on namenode-ext %d: %w", id, other, err)
			}
		}
		if createAt.IsZero() {
			if _, err := hcs[other].Create(cctx, hintclient.Hint{Paths: []string{dir}, In: time.Second, For: time.Minute, Readers: readers, DryRun: true}); err == nil {
				createAt = time.Now()
			} else if !errors.Is(err, hotspot.ErrUnavailable) && cctx.Err() == nil {
				cancel()
				return 0, 0, 0, fmt.Errorf("dry-run hint on namenode-ext %d: %w", other, err)
			}
		}
		cancel()
		if time.Now().After(deadline) {
			return 0, 0, 0, fmt.Errorf("namenode-ext %d not serving hints 3 min after the kill", other)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return activeAt.Sub(killed), hintsAt.Sub(activeAt), createAt.Sub(activeAt), nil
}

// stormRetry is stormWith with readers that retry: a failed open or read is tried again
// after 100 ms from the offset reached (for at most 5 minutes per reader), and every retry is
// counted.
func stormRetry(ctx context.Context, c *cluster.Cluster, o options, files []string, atStart func()) (result, int64, error) {
	var retries atomic.Int64
	r, err := readers(ctx, c, o, atStart, func(cl *hdfs.Client) error {
		giveUp := time.Now().Add(5 * time.Minute)
		buf := make([]byte, 1<<20)
		for _, name := range files {
			var got int64
			for got < o.fileBytes {
				n, err := readFrom(cl, name, got, buf)
				got += n
				if err == nil && got != o.fileBytes {
					return fmt.Errorf("%s: read %d bytes, want %d", name, got, o.fileBytes)
				}
				if err != nil {
					if time.Now().After(giveUp) || ctx.Err() != nil {
						return fmt.Errorf("%s at %d: %w (retried for 5 min)", name, got, err)
					}
					retries.Add(1)
					time.Sleep(100 * time.Millisecond)
				}
			}
		}
		return nil
	})
	return r, retries.Load(), err
}

// readFrom reads name from off to its end, returning the bytes read before an error.
func readFrom(cl *hdfs.Client, name string, off int64, buf []byte) (int64, error) {
	f, err := cl.Open(name)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if off > 0 {
		if _, err := f.Seek(off, io.SeekStart); err != nil {
			return 0, err
		}
	}
	return io.CopyBuffer(io.Discard, f, buf)
}

// replicationRetry is a file's factor, asked again for a while across a failover.
func replicationRetry(ctx context.Context, c *cluster.Cluster, name string) (int, error) {
	var last error
	for attempt := 0; attempt < 100; attempt++ {
		cl, err := c.Client(user0)
		if err == nil {
			r, err := hdfsio.Replication(cl, name)
			cl.Close()
			if err == nil {
				return r, nil
			}
			last = err
		} else {
			last = err
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return 0, last
}

// doneRetry ends a hint, retrying while namenode-ext recovers.
func doneRetry(ctx context.Context, hc *hintclient.Client, id string) (*hotspot.HintStatus, error) {
	return whileUnavailable(250*time.Millisecond, func() (*hotspot.HintStatus, error) { return hc.Done(ctx, id) })
}
