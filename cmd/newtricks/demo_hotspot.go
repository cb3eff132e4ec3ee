package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/colinmarc/hdfs/v2"

	"github.com/newtricks/newtricks/internal/hdfsio"
	"github.com/newtricks/newtricks/namenode-ext/hotspot/hintclient"
)

const (
	demoDataNodes     = 6
	demoReadBandwidth = 4 << 20 // dfs.datanode.data.read.bandwidthPerSec of every demo DataNode
	demoHotSize       = 8 << 20
	demoReaders       = 12
	demoHotFile       = "/demo/hot/embeddings.bin"
)

// hotspot shows the initialization storm trick: a storm of readers at replication 3, a hint,
// the raised factor, the same storm again, and the restore.
func (d *demo) hotspot(ctx context.Context) error {
	alice, err := d.c.Client("alice")
	if err != nil {
		return err
	}
	defer alice.Close()
	if err := alice.MkdirAll("/demo/hot", 0o755); err != nil {
		return err
	}
	// One block, so at replication 3 only three DataNodes can serve it.
	w, err := alice.CreateFile(demoHotFile, 3, demoHotSize, 0o644)
	if err != nil {
		return err
	}
	data := make([]byte, demoHotSize)
	rand.Read(data)
	if _, err := w.Write(data); err != nil {
		return err
	}
	if err := hdfsio.CloseFile(ctx, w); err != nil {
		return err
	}
	fmt.Fprintf(d.out, "== hotspot: %s (%d MiB, replication 3); %d readers, each its own HDFS client, load it at once\n",
		demoHotFile, demoHotSize>>20, demoReaders)
	served := d.readsServed()
	before, err := d.storm(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(d.out, "   storm at replication 3: slowest reader done after %v; MiB served per DataNode %v\n",
		before.Round(time.Millisecond), d.readsSince(served))

	hc, err := hintclient.Dial(d.lay.NameNodeAPI, "alice")
	if err != nil {
		return err
	}
	defer hc.Close()
	sent := time.Now()
	plan, err := hc.Create(ctx, hintclient.Hint{Paths: []string{"/demo/hot"}, In: 5 * time.Second, For: 2 * time.Minute, Readers: demoReaders})
	if err != nil {
		return fmt.Errorf("hint: %w", err)
	}
	fmt.Fprintf(d.out, "   hint %s sent by alice (hot in 5s, for 2m, %d readers): %d bytes to copy, estimated ready %v\n",
		plan.HintID, demoReaders, plan.BytesToCopy, plan.EstimatedReady.Sub(sent).Round(100*time.Millisecond))
	for _, f := range plan.Files {
		fmt.Fprintf(d.out, "   plan: %s replication %d -> %d\n", f.Path, f.Original, f.Target)
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	st, err := hc.WaitReady(wctx, plan.HintID, 200*time.Millisecond)
	if err != nil {
		return fmt.Errorf("wait for hint: %w", err)
	}
	for _, f := range st.Files {
		fmt.Fprintf(d.out, "   ready after %v: %s has %d replicas placed (target %d)\n", time.Since(sent).Round(100*time.Millisecond), f.Path, f.Placed, f.Target)
	}
	served = d.readsServed()
	after, err := d.storm(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(d.out, "   storm after the hint: slowest reader done after %v (%.1fx faster); MiB served per DataNode %v\n",
		after.Round(time.Millisecond), before.Seconds()/after.Seconds(), d.readsSince(served))

	if _, err := hc.Done(ctx, plan.HintID); err != nil {
		return fmt.Errorf("done: %w", err)
	}
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		fi, err := alice.Stat(demoHotFile)
		if err != nil {
			return err
		}
		if r := fi.Sys().(*hdfs.FileStatus).GetBlockReplication(); r == 3 {
			fmt.Fprintf(d.out, "   hint done: %s is back at replication %d; HDFS removes the extra replicas\n", demoHotFile, r)
			return nil
		}
		select {
		case <-rctx.Done():
			return fmt.Errorf("replication of %s not restored: %w", demoHotFile, rctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// storm has demoReaders clients read the hot file at once and returns when the slowest is
// done: the barrier a training job waits at.
func (d *demo) storm(ctx context.Context) (time.Duration, error) {
	clients := make([]*hdfs.Client, demoReaders)
	for i := range clients {
		c, err := d.c.Client(fmt.Sprintf("rank%d", i))
		if err != nil {
			return 0, err
		}
		defer c.Close()
		clients[i] = c
	}
	start := time.Now()
	errs := make(chan error, demoReaders)
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := c.Open(demoHotFile)
			if err != nil {
				errs <- err
				return
			}
			defer f.Close()
			n, err := io.Copy(io.Discard, f)
			if err == nil && n != demoHotSize {
				err = fmt.Errorf("read %d bytes, want %d", n, demoHotSize)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return 0, fmt.Errorf("reader: %w", err)
		}
	}
	return time.Since(start), nil
}

// readsServed returns, per DataNode, the MiB its JVM has written (wchar of /proc/<pid>/io,
// which counts sendfile and socket writes): during a storm that is what it served readers.
func (d *demo) readsServed() []int {
	var n []int
	for _, dn := range d.c.DataNodes() {
		var wchar int
		data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/io", dn.PID))
		for _, line := range bytes.Split(data, []byte("\n")) {
			if v, ok := bytes.CutPrefix(line, []byte("wchar: ")); ok {
				wchar, _ = strconv.Atoi(string(v))
			}
		}
		n = append(n, wchar)
	}
	return n
}

// readsSince returns the MiB each DataNode served since before.
func (d *demo) readsSince(before []int) []int {
	now := d.readsServed()
	for i := range now {
		if i < len(before) {
			now[i] = (now[i] - before[i]) >> 20
		}
	}
	return now
}
