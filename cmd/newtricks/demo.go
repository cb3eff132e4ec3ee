package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"flag"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/newtricks/newtricks/harness/cluster"
	"github.com/newtricks/newtricks/harness/extcluster"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

func init() {
	register("demo", command{summary: "start a local cluster with the extensions, show what they do, tear down", run: runDemo})
}

// demo is the state `make demo` walks through; each step prints what it saw.
type demo struct {
	out      io.Writer
	c        *cluster.Cluster
	lay      extcluster.Layout
	ns       pb.NamespaceClient
	dir      pb.DataNodeDirectoryClient
	mirrorDC *mirrorDemo // dc-b and the WAN, for the mirror section
}

func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	keep := fs.Bool("keep", false, "leave the cluster running (stop it with Ctrl-C)")
	if err := fs.Parse(args); err != nil {
		return usagef("%v", err)
	}
	a, err := extcluster.ArtifactsFromEnv()
	if err != nil {
		return fmt.Errorf("%w (run it as `make demo`, which builds and sets them)", err)
	}
	base, err := os.MkdirTemp("", "newtricks-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(base)
	// The evaluation cluster first: dc-a's mirror keys name it.
	mdc, mirrorKeys, err := startMirrorDemo(ctx, a, base, stdout)
	if err != nil {
		return err
	}
	defer mdc.stop()
	// Six DataNodes, each read-throttled, so that a hot file at replication 3 is limited by
	// its three DataNodes' bandwidth, as in a real initialization storm.
	cfg, lay, err := extcluster.Setup(a, filepath.Join(base, "dc-a"), extcluster.Options{Name: "dc-a", DataNodes: demoDataNodes,
		HDFSSite: map[string]string{"dfs.datanode.data.read.bandwidthPerSec": strconv.Itoa(demoReadBandwidth)},
		// The demo shows the events namenode-ext receives: subscribe to them.
		NameNodeSite: map[string]string{"newtricks.namenode.ext.events.subscribe": "CREATE,CLOSE,RENAME,UNLINK,audit:open"}})
	if err != nil {
		return err
	}
	for k, v := range mirrorKeys {
		cfg.NameNodeSite[k] = v
	}
	cfg.CoreSite = map[string]string{"hadoop.proxyuser.mirror.hosts": "127.0.0.1", "hadoop.proxyuser.mirror.users": "*"}
	defer os.RemoveAll(lay.SocketDir)
	fmt.Fprintf(stdout, "== starting dc-a: 1 NameNode + %d DataNodes (reads throttled to %d MiB/s each) with the newtricks hooks (logs in %s)\n",
		demoDataNodes, demoReadBandwidth>>20, base)
	start := time.Now()
	c, err := cluster.Start(ctx, cfg)
	if err != nil {
		return err
	}
	defer func() {
		fmt.Fprintln(stdout, "== tearing down")
		c.Stop()
	}()
	fmt.Fprintf(stdout, "   up in %v: NameNode %s, web UI http://%s\n", time.Since(start).Round(time.Millisecond), c.NameNodeAddr(), c.NameNodeHTTPAddr())
	cc, err := extcluster.Dial(lay.NameNodeAPI)
	if err != nil {
		return err
	}
	defer cc.Close()
	d := &demo{out: stdout, c: c, lay: lay, ns: pb.NewNamespaceClient(cc), dir: pb.NewDataNodeDirectoryClient(cc), mirrorDC: mdc}
	for _, step := range []func(context.Context) error{d.waitExtensions, d.writeAndRead, d.showEvents, d.showReplicas, d.hotspot, d.offload, d.mirror} {
		if err := step(ctx); err != nil {
			var b bytes.Buffer
			c.DumpLogs(&b, 30)
			fmt.Fprint(stderr, b.String())
			return err
		}
	}
	if *keep {
		fmt.Fprintln(stdout, "== cluster kept running; Ctrl-C to stop")
		<-ctx.Done()
	}
	return nil
}

func (d *demo) waitExtensions(ctx context.Context) error {
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err := extcluster.WaitServing(wctx, func(ctx context.Context) error {
		_, err := d.ns.RecentEvents(ctx, &pb.RecentEventsRequest{Limit: 1})
		return err
	})
	if err != nil {
		return fmt.Errorf("namenode-ext: %w", err)
	}
	fmt.Fprintf(d.out, "== namenode-ext serving on %s (metrics http://%s/metrics)\n", d.lay.NameNodeAPI, d.lay.NameNodeMetrics)
	return nil
}

func (d *demo) writeAndRead(ctx context.Context) error {
	me, err := user.Current()
	if err != nil {
		return err
	}
	root, err := d.c.Client(me.Username) // the NameNode's OS user is the HDFS superuser
	if err != nil {
		return err
	}
	defer root.Close()
	if err := root.MkdirAll("/demo", 0o777); err != nil {
		return err
	}
	alice, err := d.c.Client("alice")
	if err != nil {
		return err
	}
	defer alice.Close()
	data := make([]byte, 3<<20+4321)
	rand.Read(data)
	w, err := alice.CreateFile("/demo/checkpoint-000100.bin", 3, 1<<20, 0o600)
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	got, err := alice.ReadFile("/demo/checkpoint-000100.bin")
	if err != nil || !bytes.Equal(got, data) {
		return fmt.Errorf("read back: %v", err)
	}
	fmt.Fprintf(d.out, "== alice wrote and read /demo/checkpoint-000100.bin (%d bytes, 1 MiB blocks, mode 0600)\n", len(data))
	return nil
}

func (d *demo) showEvents(ctx context.Context) error {
	time.Sleep(time.Second) // events arrive within ~100 ms; give them a moment
	resp, err := d.ns.RecentEvents(ctx, &pb.RecentEventsRequest{PathPrefix: "/demo"})
	if err != nil {
		return err
	}
	fmt.Fprintf(d.out, "== events namenode-ext saw under /demo (last txid %d, audit events dropped %d):\n", resp.GetLastTxid(), resp.GetAuditDroppedTotal())
	for _, e := range resp.GetEvents() {
		switch {
		case e.GetAudit() != nil:
			a := e.GetAudit()
			fmt.Fprintf(d.out, "   audit      %-12s %-32s user=%s ip=%s allowed=%v\n", a.GetCmd(), a.GetSrc(), a.GetUser(), a.GetClientIp(), a.GetAllowed())
		case e.GetNamespace() != nil:
			n := e.GetNamespace()
			fmt.Fprintf(d.out, "   inotify    %-12s %-32s txid=%d size=%d\n", n.GetType(), n.GetPath(), n.GetTxid(), n.GetSize())
		}
	}
	return nil
}

func (d *demo) showReplicas(ctx context.Context) error {
	lb, err := d.ns.Locate(ctx, &pb.LocateRequest{Path: "/demo/checkpoint-000100.bin", User: "alice"})
	if err != nil {
		return err
	}
	fmt.Fprintf(d.out, "== blocks of the file, resolved by datanode-ext after the DataNode checked alice's block token:\n")
	for _, b := range lb.GetBlocks() {
		loc := b.GetLocations()[0]
		for _, dn := range d.c.DataNodes() {
			if dn.XferAddr != loc.GetXferAddr() {
				continue
			}
			cc, err := extcluster.Dial(d.lay.DataNodeAPI[dn.Index])
			if err != nil {
				return err
			}
			resp, err := pb.NewReplicasClient(cc).Read(ctx, &pb.ReadReplicaRequest{Block: b, User: "alice"})
			cc.Close()
			if err != nil {
				return fmt.Errorf("block %d: %w", b.GetBlockId(), err)
			}
			fmt.Fprintf(d.out, "   block %d (%d bytes) on datanode %d: a replica of %d bytes\n", b.GetBlockId(), b.GetNumBytes(), dn.Index, resp.GetNumBytes())
		}
	}
	_, err = d.ns.Locate(ctx, &pb.LocateRequest{Path: "/demo/checkpoint-000100.bin", User: "mallory"})
	if status.Code(err) != codes.PermissionDenied {
		return fmt.Errorf("mallory located alice's 0600 file: %v", err)
	}
	fmt.Fprintf(d.out, "   mallory asks for the same blocks: %v\n", status.Convert(err).Message())
	return nil
}
