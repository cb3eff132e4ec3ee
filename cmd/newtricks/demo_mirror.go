package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/colinmarc/hdfs/v2"

	"github.com/newtricks/newtricks/harness/cluster"
	"github.com/newtricks/newtricks/harness/extcluster"
	"github.com/newtricks/newtricks/harness/wan"
	"github.com/newtricks/newtricks/internal/hdfsio"
	"github.com/newtricks/newtricks/namenode-ext/mirror/mirrorclient"
)

const (
	demoWANDelay   = 20 * time.Millisecond // one way: 40 ms round trip
	demoWANRate    = 20 << 20
	demoTensors    = 300
	demoTensorSize = 15000
	demoShards     = 2
	demoShardSize  = 4 << 20
)

// mirrorDemo is the evaluation cluster dc-b and the emulated WAN between it and dc-a.
type mirrorDemo struct {
	b     *cluster.Cluster
	relay *wan.Relay
}

// startMirrorDemo starts dc-b and the WAN relay, and returns the keys dc-a's NameNode needs to
// mirror /ckpt/{job}/step_{step} to dc-b through it.
func startMirrorDemo(ctx context.Context, a extcluster.Artifacts, base string, out io.Writer) (*mirrorDemo, map[string]string, error) {
	relay, err := wan.Listen("127.0.0.1:0", wan.Link{Delay: demoWANDelay, Rate: demoWANRate}, nil)
	if err != nil {
		return nil, nil, err
	}
	proxy := map[string]string{"hadoop.proxyuser.mirror.hosts": "127.0.0.1", "hadoop.proxyuser.mirror.users": "*"}
	cfg, _, err := extcluster.Setup(a, filepath.Join(base, "dc-b"), extcluster.Options{Name: "dc-b", DataNodes: 1, NoHooks: true, NameNodeSite: proxy})
	if err != nil {
		relay.Close()
		return nil, nil, err
	}
	cfg.CoreSite = proxy
	fmt.Fprintf(out, "== starting dc-b (evaluation): 1 NameNode + 1 DataNode, %v away (round trip), %d MiB/s, through the WAN emulator\n",
		2*demoWANDelay, demoWANRate>>20)
	b, err := cluster.Start(ctx, cfg)
	if err != nil {
		relay.Close()
		return nil, nil, err
	}
	su, err := b.Client(currentUserName())
	if err == nil {
		for _, d := range []string{"/ckpt", "/tmp/newtricks-mirror"} {
			if err = su.MkdirAll(d, 0o777); err == nil {
				err = su.Chmod(d, 0o1777)
			}
		}
		su.Close()
	}
	if err != nil {
		b.Stop()
		relay.Close()
		return nil, nil, err
	}
	keys := map[string]string{
		"newtricks.mirror.rules":                "ckpt",
		"newtricks.mirror.dest.namenode":        b.NameNodeAddr(),
		"newtricks.mirror.dest.http":            b.NameNodeHTTPAddr(),
		"newtricks.mirror.dest.socks-proxy":     relay.Addr(),
		"newtricks.mirror.proxy-user":           "mirror",
		"newtricks.mirror.rule.ckpt.source":     "/ckpt/{job}/step_{step}",
		"newtricks.mirror.rule.ckpt.marker":     "_SUCCESS",
		"hadoop.proxyuser.mirror.hosts":         "127.0.0.1",
		"hadoop.proxyuser.mirror.users":         "*",
		"newtricks.mirror.rule.ckpt.retain":     "2",
		"newtricks.mirror.rule.ckpt.dest":       "/ckpt/{job}/step_{step}",
		"newtricks.mirror.rule.ckpt.completion": "marker",
	}
	return &mirrorDemo{b: b, relay: relay}, keys, nil
}

func (m *mirrorDemo) stop() {
	m.b.Stop()
	m.relay.Close()
}

func currentUserName() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "root"
}

// mirror shows trick 2: a trainer writes a checkpoint on dc-a, the evaluator marks it urgent,
// namenode-ext mirrors it during the write, and the evaluator reads it locally on dc-b.
func (d *demo) mirror(ctx context.Context) error {
	if d.mirrorDC == nil {
		return nil
	}
	me := currentUserName()
	su, err := d.c.Client(me)
	if err != nil {
		return err
	}
	if err := su.MkdirAll("/ckpt", 0o777); err == nil {
		err = su.Chmod("/ckpt", 0o1777)
	}
	su.Close()
	if err != nil {
		return err
	}
	alice, err := d.c.Client("alice")
	if err != nil {
		return err
	}
	defer alice.Close()
	mc, err := mirrorclient.Dial(d.lay.NameNodeAPI, "alice")
	if err != nil {
		return err
	}
	defer mc.Close()
	const dir = "/ckpt/llama/step_100"
	total := int64(demoTensors*demoTensorSize + demoShards*demoShardSize)
	fmt.Fprintf(d.out, "== mirror: alice's trainer writes %s on dc-a (%d tensors of %d KB + %d shards of %d MiB, %.0f MiB)\n",
		dir, demoTensors, demoTensorSize/1000, demoShards, demoShardSize>>20, float64(total)/(1<<20))
	if _, err := mc.Urgent(ctx, mirrorclient.Ref{Job: "llama", Step: 100}); err != nil {
		return fmt.Errorf("urgent: %w", err)
	}
	fmt.Fprintln(d.out, "   the evaluator marks step 100 urgent before it is written (newtricks mirror urgent --job llama --step 100)")
	began := time.Now()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // what `newtricks mirror status` would show, every second
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Second):
			}
			st, err := mc.Status(ctx, "", "llama")
			if err == nil && len(st.Checkpoints) > 0 {
				c := st.Checkpoints[0]
				fmt.Fprintf(d.out, "   +%4.1fs %-8s %4d/%-4d files %6.1f/%.1f MiB mirrored, link %.1f MiB/s\n",
					time.Since(began).Seconds(), c.State, c.FilesDone, c.FilesTotal, float64(c.BytesDone)/(1<<20),
					float64(c.BytesTotal)/(1<<20), st.Link.Rate/(1<<20))
			}
		}
	}()
	r := rand.New(rand.NewPCG(7, 100))
	write := func(p string, n int) error {
		w, err := alice.CreateFile(p, 1, 128<<20, 0o644)
		if err != nil {
			return err
		}
		buf := make([]byte, n)
		for i := range buf {
			buf[i] = byte(r.Uint32())
		}
		if n > 0 {
			if _, err := w.Write(buf); err != nil {
				return err
			}
		}
		return hdfsio.CloseFile(ctx, w)
	}
	if err := alice.MkdirAll(dir+"/model", 0o755); err != nil {
		return err
	}
	for i := 0; i < demoTensors; i++ {
		if err := write(fmt.Sprintf("%s/model/tensor_%04d.pt", dir, i), demoTensorSize); err != nil {
			close(stop)
			return err
		}
		if i%(demoTensors/demoShards) == 0 && i/(demoTensors/demoShards) < demoShards {
			if err := write(fmt.Sprintf("%s/optim_%d.bin", dir, i/(demoTensors/demoShards)), demoShardSize); err != nil {
				close(stop)
				return err
			}
		}
	}
	if err := write(dir+"/_SUCCESS", 0); err != nil {
		close(stop)
		return err
	}
	complete := time.Now()
	fmt.Fprintf(d.out, "   checkpoint complete on dc-a after %.1fs of writing; the evaluator waits (newtricks mirror wait)\n", complete.Sub(began).Seconds())
	wctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cp, err := mc.Wait(wctx, mirrorclient.Ref{Job: "llama", Step: 100}, 500*time.Millisecond, nil)
	close(stop)
	wg.Wait()
	if err != nil {
		return err
	}
	committed := time.Since(complete)
	readLocal, err := readTree(d.mirrorDC.b, cp.DestPath, nil)
	if err != nil {
		return fmt.Errorf("read on dc-b: %w", err)
	}
	fmt.Fprintf(d.out, "   committed on dc-b %.2fs after completion (%d files, verified, renamed into place at once); evaluator read it locally in %.2fs\n",
		committed.Seconds(), cp.FilesDone, readLocal.Seconds())
	readWAN, err := readTree(d.c, dir, wan.Dialer(d.mirrorDC.relay.Addr()))
	if err != nil {
		return fmt.Errorf("read across the WAN: %w", err)
	}
	fmt.Fprintf(d.out, "   for comparison, reading it from dc-a across the WAN (16 readers): %.2fs\n", readWAN.Seconds())
	fmt.Fprintf(d.out, "   evaluation's I/O after the checkpoint completed: %.2fs with the mirror, %.2fs without\n",
		(committed + readLocal).Seconds(), readWAN.Seconds())
	return nil
}

// readTree reads every file below dir with 16 readers (through dial if set) and returns how long
// it took.
func readTree(c *cluster.Cluster, dir string, dial func(context.Context, string, string) (net.Conn, error)) (time.Duration, error) {
	opts := c.ClientOptions("alice")
	if dial != nil {
		opts.NamenodeDialFunc, opts.DatanodeDialFunc = dial, dial
	}
	lister, err := hdfs.NewClient(opts)
	if err != nil {
		return 0, err
	}
	defer lister.Close()
	var files []string
	if err := lister.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			files = append(files, p)
		}
		return err
	}); err != nil {
		return 0, err
	}
	began := time.Now()
	next := make(chan string)
	errc := make(chan error, 16)
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		cl, err := hdfs.NewClient(opts)
		if err != nil {
			return 0, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer cl.Close()
			for p := range next {
				r, err := cl.Open(p)
				if err == nil {
					_, err = io.Copy(io.Discard, r)
					r.Close()
				}
				if err != nil {
					errc <- err
					for range next {
					}
					return
				}
			}
		}()
	}
	for _, p := range files {
		next <- p
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errc:
		return 0, err
	default:
	}
	return time.Since(began), nil
}
