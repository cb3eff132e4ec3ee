package conformance

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/colinmarc/hdfs/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/newtricks/newtricks/dataset"
	"github.com/newtricks/newtricks/harness/cluster"
	"github.com/newtricks/newtricks/harness/datasets"
	"github.com/newtricks/newtricks/harness/extcluster"
	"github.com/newtricks/newtricks/internal/apiclient"
	"github.com/newtricks/newtricks/internal/hdfsio"
	"github.com/newtricks/newtricks/namenode-ext/hotspot/hintclient"
	"github.com/newtricks/newtricks/namenode-ext/mirror/mirrorclient"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
	"github.com/newtricks/newtricks/schedule"
)

// haExt are the public clients of both NameNodes' namenode-ext.
type haExt struct {
	hints  [2]pb.HintsClient
	mirror [2]pb.MirrorClient
	ns     [2]pb.NamespaceClient
}

func dialHAExt(t *testing.T, lay extcluster.Layout) *haExt {
	t.Helper()
	x := &haExt{}
	for i := range 2 {
		cc, err := extcluster.Dial(lay.NameNodeAPIs[i])
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cc.Close() })
		x.hints[i], x.mirror[i], x.ns[i] = pb.NewHintsClient(cc), pb.NewMirrorClient(cc), pb.NewNamespaceClient(cc)
	}
	return x
}

// standbyAnswer checks that namenode-ext i answers like a standby NameNode: UNAVAILABLE, "standby".
func (x *haExt) standbyAnswer(ctx context.Context, i int, user string) error {
	_, err := x.hints[i].List(ctx, &pb.ListHintsRequest{User: user})
	if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "standby") {
		return fmt.Errorf("namenode-ext %d: Hints.List = %v, want UNAVAILABLE standby", i, err)
	}
	_, err = x.mirror[i].Status(ctx, &pb.MirrorStatusRequest{User: user})
	if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "standby") {
		return fmt.Errorf("namenode-ext %d: Mirror.Status = %v, want UNAVAILABLE standby", i, err)
	}
	return nil
}

// startHATricks starts the HA cluster with core-site (group mapping, proxy users) as the
// mirror needs; it returns the base directory too (the co-processes' logs are below it).
func startHATricks(t *testing.T, a extcluster.Artifacts, o extcluster.Options) (*cluster.Cluster, extcluster.Layout, string) {
	t.Helper()
	base := t.TempDir()
	cfg, lay, err := extcluster.Setup(a, base, o)
	if err != nil {
		t.Fatal(err)
	}
	cfg.CoreSite = mirrorSite()
	cfg.StartupTimeout = 3 * time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c, err := cluster.Start(ctx, cfg)
	if err != nil {
		t.Fatalf("start HA cluster: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			var b bytes.Buffer
			c.DumpLogs(&b, 60)
			dumpExtLogs(&b, filepath.Join(base, "ext-logs"), 80)
			t.Logf("logs of cluster %s:\n%s", o.Name, b.String())
		}
		if err := c.Stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
		os.RemoveAll(lay.SocketDir)
	})
	return c, lay, base
}

// takeover measures, from the moment NameNode to is seen active (polled every 50 ms from
// since), how long until its namenode-ext answers hints (Hints.List, after recovery) and the
// mirror (Mirror.Status); it logs the figures with the load.
func (x *haExt) takeover(t *testing.T, ctx context.Context, c *cluster.Cluster, to int, user, what string, since time.Time) {
	t.Helper()
	var activeAt time.Time
	for activeAt.IsZero() {
		if s, err := c.NameNodeState(ctx, to); err == nil && s == cluster.StateActive {
			activeAt = time.Now()
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("%s: namenode %d never active", what, to)
		}
		time.Sleep(50 * time.Millisecond)
	}
	var hintsAt, mirrorAt time.Time
	for hintsAt.IsZero() || mirrorAt.IsZero() {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		// Working = recovered: a hint's status and a checkpoint's completion are answered
		// UNAVAILABLE until the term's hints and mirror have recovered their state; after,
		// an unknown hint is NOT_FOUND and an unseen checkpoint is refused for what it is.
		if hintsAt.IsZero() {
			_, err := x.hints[to].Status(cctx, &pb.HintStatusRequest{User: user, HintId: "h0000000000000000"})
			if err == nil || (status.Code(err) != codes.Unavailable && status.Code(err) != codes.DeadlineExceeded) {
				hintsAt = time.Now()
			}
		}
		if mirrorAt.IsZero() {
			_, err := x.mirror[to].Complete(cctx, &pb.MirrorCompleteRequest{User: user, Ref: &pb.CheckpointRef{Rule: "ck", Job: "probe", Step: 999999}})
			if err == nil || (status.Code(err) != codes.Unavailable && status.Code(err) != codes.DeadlineExceeded) {
				mirrorAt = time.Now()
			}
		}
		cancel()
		if ctx.Err() != nil {
			t.Fatalf("%s: namenode-ext %d never served", what, to)
		}
		time.Sleep(50 * time.Millisecond)
	}
	h, m := hintsAt.Sub(activeAt), mirrorAt.Sub(activeAt)
	t.Logf("TAKEOVER %s: namenode %d active %v after the failover began; hints serve %v and the mirror %v after it became active (target <= 5s; load %s)",
		what, to, activeAt.Sub(since).Round(time.Millisecond), h.Round(time.Millisecond), m.Round(time.Millisecond), loadAverage())
	if h > 5*time.Second || m > 5*time.Second {
		t.Logf("TAKEOVER %s: over the 5 s target", what)
	}
}

func setReplicationFile(t *testing.T, cl *hdfs.Client, name string, data []byte, rep int) {
	t.Helper()
	w, err := cl.CreateFile(name, rep, 1<<20, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := closeWritten(w); err != nil {
		t.Fatal(err)
	}
}

// retryWrite writes a checkpoint file through the nameservice, waiting out a failover (no
// NameNode available, or the one it reached went away) before the file is created.
func retryWrite(t *testing.T, c *cluster.Cluster, user, p string, data []byte) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		cl, err := c.Client(user)
		if err == nil {
			err = cl.MkdirAll(path.Dir(p), 0o755)
			if err == nil {
				if _, serr := cl.Stat(p); serr == nil {
					cl.Remove(p) // a create that failed half-way
				}
				err = writeAll(cl, p, data)
			}
			cl.Close()
		}
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("write %s: %v", p, err)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// writeAll writes a file, nothing for an empty one (colinmarc/hdfs allocates a block on any
// Write, and the NameNode then never completes the file), waiting out ErrReplicating on close.
func writeAll(cl *hdfs.Client, p string, data []byte) error {
	w, err := cl.Create(p)
	if err != nil {
		return err
	}
	if len(data) > 0 {
		if _, err := w.Write(data); err != nil {
			w.Close()
			return err
		}
	}
	return closeWritten(w)
}

// committedLines counts "checkpoint committed" log lines naming dir in every namenode-ext log.
func committedLines(t *testing.T, base, dir string) int {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(base, "ext-logs", "namenode-*", "*namenode-ext*.log*"))
	n := 0
	for _, l := range logs {
		data, err := os.ReadFile(l)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			if strings.Contains(line, "checkpoint committed") && strings.Contains(line, dir) {
				n++
			}
		}
	}
	return n
}

// TestHATricks runs hints, the mirror and the event stream on an HA nameservice with the hooks
// on both NameNodes: only the active NameNode's namenode-ext acts, the standby's answers
// UNAVAILABLE "standby"; a kill -9 of the active during a hint (the factor stays raised, the
// new active restores it exactly), a kill -9 during a mirror (committed once, bytes equal), and
// a manual failover and back (every CLOSE written meanwhile reaches a namenode-ext, none twice
// within one); the time from the new NameNode becoming active to hints and the mirror serving
// again is logged for each (TAKEOVER lines).
func TestHATricks(t *testing.T) {
	a := artifacts(t)
	su := superuser(t)
	b := startClusterCore(t, a, extcluster.Options{Name: "hb", DataNodes: 1, NoHooks: true, NameNodeSite: mirrorSite()})
	site := mirrorSite()
	for k, v := range map[string]string{
		"newtricks.mirror.rules":                           "ck",
		"newtricks.mirror.dest.namenode":                   b.NameNodeAddr(),
		"newtricks.mirror.dest.http":                       b.NameNodeHTTPAddr(),
		"newtricks.mirror.proxy-user":                      "mirror",
		"newtricks.mirror.concurrency":                     "4",
		"newtricks.mirror.retry.interval":                  "200ms",
		"newtricks.mirror.rule.ck.source":                  "/ckpt/{job}/step_{step}",
		"newtricks.mirror.rule.ck.completion":              "marker",
		"newtricks.mirror.cleanup.delay":                   "1s",
		"newtricks.hotspot.allowed-prefixes":               "/hot",
		"newtricks.hotspot.poll-interval":                  "300ms",
		"newtricks.namenode.ext.events.subscribe":          "CLOSE",
		"newtricks.namenode.ext.events.subscribe.prefixes": "/ev/",
		"newtricks.ext.restart.backoff.max.ms":             "1000",
	} {
		site[k] = v
	}
	c, lay, base := startHATricks(t, a, extcluster.Options{Name: "hat", DataNodes: 2, NameNodeSite: site,
		HA: &cluster.HAConfig{Nameservice: "hat"}})
	t.Logf("STARTUP HA tricks: ready in %v (load %s)", c.StartupTime().Round(time.Millisecond), loadAverage())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	x := dialHAExt(t, lay)

	// nn0 active: its namenode-ext serves; nn1's answers like a standby NameNode.
	eventually(t, 90*time.Second, "namenode-ext 0 serving hints", func() error {
		_, err := x.hints[0].List(ctx, &pb.ListHintsRequest{User: su})
		return err
	})
	eventually(t, 90*time.Second, "namenode-ext 1 answering standby", func() error { return x.standbyAnswer(ctx, 1, su) })

	for _, cl := range []*cluster.Cluster{c, b} {
		s, err := cl.Client(su)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range []string{"/ckpt", "/tmp/newtricks-mirror", "/hot", "/ev"} {
			if err := s.MkdirAll(d, 0o777); err != nil {
				t.Fatal(err)
			}
			if err := s.Chmod(d, 0o1777); err != nil {
				t.Fatal(err)
			}
		}
		s.Close()
	}
	suA, err := c.Client(su)
	if err != nil {
		t.Fatal(err)
	}
	defer suA.Close()
	// Clients that know only the nameservice (ha_clients_test.go) call all along.
	if err := writeAll(suA, "/tmp/hac-probe", randomBytes(t, 4096)); err != nil {
		t.Fatal(err)
	}
	cl := startHAClients(t, c, lay, su, "/tmp/hac-probe")

	// 1. A hint raised by nn0's namenode-ext, then kill -9 of nn0 (with its co-process).
	hot := randomBytes(t, 1<<20+77)
	setReplicationFile(t, suA, "/hot/f1", hot, 1)
	plan, err := x.hints[0].Create(ctx, &pb.CreateHintRequest{User: su, Paths: []string{"/hot"}, HotForMs: 120_000, Readers: 4, Replication: 2})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "/hot/f1 raised to 2", func() error {
		if r, err := replication(suA, "/hot/f1"); err != nil || r != 2 {
			return fmt.Errorf("replication %d (%v)", r, err)
		}
		return nil
	})
	began := time.Now()
	if err := c.KillNameNode(0); err != nil {
		t.Fatal(err)
	}
	x.takeover(t, ctx, c, 1, su, "kill -9 during a hint", began)
	restarted := make(chan error, 1)
	go func() { restarted <- c.StartNameNode(ctx, 0) }()
	st, err := x.hints[1].Status(ctx, &pb.HintStatusRequest{User: su, HintId: plan.GetHintId()})
	if err != nil {
		t.Fatalf("the hint on the new active: %v", err)
	}
	awaitClientAfterTakeover(t, suA, "/hot/f1")
	if r, err := replication(suA, "/hot/f1"); err != nil || r != 2 {
		t.Fatalf("after the failover /hot/f1 has replication %d (%v), want 2 (still raised)", r, err)
	}
	t.Logf("hint %s on the new active: %s", plan.GetHintId(), st.GetState())
	// A client of the nameservice finds the hint on the new active and ends it there.
	if s, err := cl.nsHints.Status(ctx, plan.GetHintId()); err != nil || s.ID != plan.GetHintId() {
		t.Fatalf("the hint through the nameservice after the kill: %v %v", s, err)
	}
	if _, err := cl.hints.Done(ctx, plan.GetHintId()); err != nil {
		t.Fatalf("done through both addresses after the kill: %v", err)
	}
	eventually(t, 60*time.Second, "/hot/f1 restored to 1", func() error {
		if r, err := replication(suA, "/hot/f1"); err != nil || r != 1 {
			return fmt.Errorf("replication %d (%v)", r, err)
		}
		return nil
	})
	if err := <-restarted; err != nil {
		t.Fatalf("restart namenode 0: %v", err)
	}
	eventually(t, 90*time.Second, "namenode-ext 0 answering standby after its restart", func() error { return x.standbyAnswer(ctx, 0, su) })

	// 2. A checkpoint mirrored by nn1's namenode-ext, kill -9 of nn1 half-way.
	const dir = "/ckpt/j/step_1"
	files := map[string][]byte{}
	for i := range 8 {
		files[fmt.Sprintf("t%02d.bin", i)] = randomBytes(t, 200_000+i*1000)
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names[:4] {
		retryWrite(t, c, "alice", path.Join(dir, n), files[n])
	}
	// The active NameNode now (on a loaded machine a ZKFC may have moved it meanwhile).
	act := 1
	eventually(t, 60*time.Second, "files copied by the active's mirror", func() error {
		i, err := c.ActiveNameNode(ctx)
		if err != nil {
			return err
		}
		act = i
		resp, err := x.mirror[act].Status(ctx, &pb.MirrorStatusRequest{User: su})
		if err != nil {
			return err
		}
		for _, cp := range resp.GetCheckpoints() {
			if cp.GetSourcePath() == dir && cp.GetFilesDone() >= 2 {
				return nil
			}
		}
		return fmt.Errorf("not yet: %v", resp.GetCheckpoints())
	})
	// A client of the nameservice waits for the commit across the kill.
	waited := make(chan error, 1)
	go func() {
		wctx, cancel := context.WithTimeout(ctx, 4*time.Minute)
		defer cancel()
		cp, err := cl.mirror.Wait(wctx, mirrorclient.Ref{Rule: "ck", Job: "j", Step: 1}, 200*time.Millisecond, nil)
		if err == nil && cp.State != mirrorclient.Committed {
			err = fmt.Errorf("ended %s", cp.State)
		}
		waited <- err
	}()
	began = time.Now()
	if err := c.KillNameNode(act); err != nil {
		t.Fatal(err)
	}
	x.takeover(t, ctx, c, 1-act, su, "kill -9 during a mirror", began)
	go func() { restarted <- c.StartNameNode(ctx, act) }()
	for _, n := range names[4:] {
		retryWrite(t, c, "alice", path.Join(dir, n), files[n])
	}
	retryWrite(t, c, "alice", path.Join(dir, "_SUCCESS"), nil)
	waitCommitted(t, ctx, x.mirror[1-act], su, "ck", "j", 1)
	if err := <-waited; err != nil {
		t.Errorf("mirror wait through the nameservice across the kill -9: %v", err)
	}
	suB, err := b.Client(su)
	if err != nil {
		t.Fatal(err)
	}
	defer suB.Close()
	for _, n := range names {
		got, err := suB.ReadFile(path.Join(dir, n))
		if err != nil || !bytes.Equal(got, files[n]) {
			t.Fatalf("dc-b %s: %d bytes (%v), want %d equal bytes", n, len(got), err, len(files[n]))
		}
	}
	if left, _ := suB.ReadDir("/tmp/newtricks-mirror"); len(left) != 0 {
		t.Errorf("staging left on dc-b: %d entries", len(left))
	}
	if n := committedLines(t, base, dir); n != 1 {
		t.Errorf("%s committed %d times in the namenode-ext logs, want once", dir, n)
	}
	if err := <-restarted; err != nil {
		t.Fatalf("restart namenode 1: %v", err)
	}
	eventually(t, 90*time.Second, "the restarted namenode-ext answering standby", func() error { return x.standbyAnswer(ctx, act, su) })

	// 3. Manual failover nn0 -> nn1 and back, with a writer closing files all along.
	var w writer
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go w.run(c, su, "/ev/w", stop, wg.Done)
	time.Sleep(3 * time.Second)
	act, err = c.WaitActive(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, hop := range [][2]int{{act, 1 - act}, {1 - act, act}} {
		began = time.Now()
		if err := c.Failover(ctx, hop[0], hop[1]); err != nil {
			t.Fatal(err)
		}
		x.takeover(t, ctx, c, hop[1], su, fmt.Sprintf("manual failover nn%d -> nn%d", hop[0], hop[1]), began)
		eventually(t, 30*time.Second, "old active's namenode-ext answering standby", func() error { return x.standbyAnswer(ctx, hop[0], su) })
		// A hint works on the new active, made by a client that knows both addresses only.
		p, err := cl.hints.Create(ctx, hintclient.Hint{Paths: []string{"/hot"}, For: time.Minute, Readers: 4, Replication: 2})
		if err != nil {
			t.Fatalf("hint on the new active: %v", err)
		}
		eventually(t, 60*time.Second, "/hot/f1 raised to 2", func() error {
			if r, err := replication(suA, "/hot/f1"); err != nil || r != 2 {
				return fmt.Errorf("replication %d (%v)", r, err)
			}
			return nil
		})
		if _, err := cl.hints.Done(ctx, p.HintID); err != nil {
			t.Fatal(err)
		}
		eventually(t, 60*time.Second, "/hot/f1 restored to 1", func() error {
			if r, err := replication(suA, "/hot/f1"); err != nil || r != 1 {
				return fmt.Errorf("replication %d (%v)", r, err)
			}
			return nil
		})
		time.Sleep(2 * time.Second)
	}
	// The Python client over both addresses, the standby's first.
	act, err = c.WaitActive(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pyBegan := time.Now()
	pyID, pyAddr := pythonHint(t, ctx, []string{lay.NameNodeAPIs[1-act], lay.NameNodeAPIs[act]}, su, "/hot")
	t.Logf("PYTHON newtricks.hint %s over both addresses (the standby's first) answered by %s, ready and done in %v", pyID, pyAddr, time.Since(pyBegan).Round(time.Millisecond))
	if pyAddr != lay.NameNodeAPIs[act] {
		t.Errorf("python hint %s answered by %s, the active's namenode-ext is %s", pyID, pyAddr, lay.NameNodeAPIs[act])
	}
	eventually(t, 60*time.Second, "/hot/f1 restored to 1 after the python hint", func() error {
		if r, err := replication(suA, "/hot/f1"); err != nil || r != 1 {
			return fmt.Errorf("replication %d (%v)", r, err)
		}
		return nil
	})
	close(stop)
	wg.Wait()
	cl.finish(t)
	written := w.names()
	time.Sleep(3 * time.Second)
	// Every CLOSE reaches the namenode-ext of the NameNode that was active (none lost), and
	// each once there; the events after the last position saved before a handover reach both
	// NameNodes' namenode-ext (the mirror skips them by its journal): counted.
	seen := map[string]int{}
	both := 0
	for i := range 2 {
		counts, err := closeCounts(ctx, x.ns[i], "/ev/")
		if err != nil {
			t.Fatalf("recent events of namenode-ext %d: %v", i, err)
		}
		for p, n := range counts {
			if n > 1 {
				t.Errorf("namenode-ext %d received CLOSE %s %d times", i, p, n)
			}
			if seen[p] > 0 {
				both++
			}
			seen[p] += n
		}
	}
	lost := 0
	for _, p := range written {
		if seen[p] == 0 {
			lost++
			t.Errorf("CLOSE of %s reached no namenode-ext", p)
		}
	}
	t.Logf("EVENTS across the manual failover and back: %d files closed (%d writes failed), %d CLOSE lost, %d received by both NameNodes' namenode-ext (sent again after the last saved position)",
		len(written), w.failed, lost, both)
	if len(written) == 0 {
		t.Fatal("the writer closed nothing")
	}
}

// awaitClientAfterTakeover waits until cl, a client of the nameservice made before a takeover,
// stats name again. Its lease renewer may have met both NameNodes as standby during the
// handover; colinmarc/hdfs then backs off from them for 5 s and answers "no available
// namenodes" meanwhile (seen on 3.3.6 at load 23, on 3.4.2 at load 15). The cases are about
// the tricks across a takeover, not about that backoff, so they wait it out first.
func awaitClientAfterTakeover(t *testing.T, cl *hdfs.Client, name string) {
	t.Helper()
	eventually(t, 30*time.Second, "the HDFS client reaching the new active", func() error {
		_, err := cl.Stat(name)
		return err
	})
}

// waitCommitted waits on Mirror.Wait until the checkpoint is committed.
func waitCommitted(t *testing.T, ctx context.Context, m pb.MirrorClient, user, rule, job string, step int64) {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	var last *pb.CheckpointStatus
	for {
		st, err := m.Wait(wctx, &pb.MirrorWaitRequest{User: user, Ref: &pb.CheckpointRef{Rule: rule, Job: job, Step: step}, IntervalMs: 200})
		for err == nil {
			var s *pb.CheckpointStatus
			if s, err = st.Recv(); err == nil {
				last = s
			}
		}
		if err == io.EOF {
			break
		}
		if status.Code(err) == codes.Unavailable && wctx.Err() == nil {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		t.Fatalf("wait %s/%d: %v (last %v)", job, step, err, last)
	}
	if last.GetState() != pb.CheckpointStatus_COMMITTED {
		t.Fatalf("checkpoint %s/%d: %v", job, step, last)
	}
}

// TestHAOffload: an offload session opened through the active NameNode's namenode-ext keeps
// serving its reader across a kill -9 of that NameNode (the session lives on the datanode-ext
// nodes, which registered with both namenode-ext): every sample after the kill equals the
// reader's own transform of it, byte for byte.
func TestHAOffload(t *testing.T) {
	a := artifacts(t)
	mediaDir := os.Getenv("NEWTRICKS_XFORM_MEDIA")
	if mediaDir == "" {
		t.Fatal("NEWTRICKS_XFORM_MEDIA is not set (make test sets it after make xform-media)")
	}
	m, err := datasets.LoadMedia(mediaDir)
	if err != nil {
		t.Fatal(err)
	}
	c, lay := startHACluster(t, a, extcluster.Options{Name: "hao", DataNodes: 2,
		HDFSSite: map[string]string{"dfs.blocksize": "1048576"},
		DataNodeSite: func(int) map[string]string {
			return map[string]string{"newtricks.datanode.ext.offload.cpu.high": "1", "newtricks.datanode.ext.offload.cpu.low": "1"}
		},
		HA: &cluster.HAConfig{Nameservice: "hao"}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	e := &offloadEnv{c: c, lay: lay, su: superuser(t)}
	if e.fs, err = c.Client(e.su); err != nil {
		t.Fatal(err)
	}
	defer e.fs.Close()
	// The reader knows the nameservice's two namenode-ext addresses (apiclient.Failover), as
	// libnewtricks' reader given a list does: locations and the directory follow the active.
	cc, err := apiclient.DialAll(lay.NameNodeAPIs, grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(128<<20)))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	e.ns, e.dir = pb.NewNamespaceClient(cc), pb.NewDataNodeDirectoryClient(cc)
	if err := extcluster.WaitDirectory(ctx, cc, e.su, 2); err != nil {
		t.Fatal(err)
	}
	local := filepath.Join(t.TempDir(), "img")
	if _, err := datasets.Write(local, datasets.Media{Images: m.Images}, datasets.Layout{Shards: 1, PerShard: 20, Singles: 4}); err != nil {
		t.Fatal(err)
	}
	if err := hdfsio.UploadDir(ctx, e.fs, local, "/data/img"); err != nil {
		t.Fatal(err)
	}
	idx, err := dataset.Build(ctx, dataset.HDFSFS{Client: e.fs}, "/data/img", dataset.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dataset.Store(ctx, e.fs, idx); err != nil {
		t.Fatal(err)
	}
	e.spec = &schedule.Spec{Name: "ha", Seed: 7, GlobalBatch: 4, WorldSize: 1, MaxSteps: 100,
		Sources: []schedule.Source{{Name: "img", Dataset: "/data/img", Weight: 1, Graph: offloadImageGraph()}}}
	if err := e.spec.Validate(); err != nil {
		t.Fatal(err)
	}
	const before, after = 4, 8
	want := nextSteps(t, e.open(t, e.su, 0, 0, false), before+after)
	r := e.open(t, e.su, 0, 0, true)
	first := nextSteps(t, r, before)
	if err := c.KillNameNode(0); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitActive(ctx); err != nil {
		t.Fatal(err)
	}
	rest := nextSteps(t, r, after)
	pathsBefore := sameSteps(t, "before the kill", first, want[:before])
	pathsAfter := sameSteps(t, "after the kill", rest, want[before:])
	// A reader opened after the kill locates its files through the new active, over the same
	// two addresses, once its HDFS client (e.fs, opened before the kill) reaches it.
	awaitClientAfterTakeover(t, e.fs, "/data/img")
	again := sameSteps(t, "opened after the kill", nextSteps(t, e.open(t, e.su, 0, 0, true), before), want[:before])
	t.Logf("a reader opened after the kill through both addresses: %v", again)
	st := r.Stats()
	t.Logf("offload across a kill -9 of the active NameNode: before %v, after %v; %d B from nodes, %d B from HDFS (load %s)",
		pathsBefore, pathsAfter, st.BytesFromNodes, st.BytesFromHDFS, loadAverage())
	if pathsAfter["offload"] == 0 {
		t.Errorf("no sample transformed by the DataNodes after the kill: %v", pathsAfter)
	}
}
