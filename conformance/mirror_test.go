package conformance

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/colinmarc/hdfs/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/newtricks/newtricks/harness/cluster"
	"github.com/newtricks/newtricks/harness/extcluster"
	"github.com/newtricks/newtricks/harness/wan"
	"github.com/newtricks/newtricks/internal/hdfsio"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// mirrorEnv is dc-a (training, with namenode-ext mirroring) and dc-b (evaluation, plain HDFS),
// every connection from the mirror to dc-b crossing an emulated WAN.
type mirrorEnv struct {
	a, b    *cluster.Cluster
	lay     extcluster.Layout
	relay   *wan.Relay
	client  pb.MirrorClient
	journal string
	su      string
	cli     string
	art     extcluster.Artifacts
}

// Both clusters: the mirror's service user "mirror" may act as anyone from loopback, and users
// have static groups (the test users are not OS users).
func mirrorSite() map[string]string {
	return map[string]string{
		"hadoop.proxyuser.mirror.hosts":              "127.0.0.1",
		"hadoop.proxyuser.mirror.users":              "*",
		"hadoop.user.group.static.mapping.overrides": "alice=ml,alice;bob=bob;dr.who=;",
		"dfs.blocksize":                              "1048576",
	}
}

// startMirrorEnv starts dc-a and dc-b; extra keys (rules, bounds) are added to dc-a's site
// over the defaults below.
func startMirrorEnv(t *testing.T, link wan.Link, extra ...map[string]string) *mirrorEnv {
	t.Helper()
	a := artifacts(t)
	relay, err := wan.Listen("127.0.0.1:0", link, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { relay.Close() })
	b := startClusterCore(t, a, extcluster.Options{Name: "dc-b", DataNodes: 1, NoHooks: true, NameNodeSite: mirrorSite()})
	env := &mirrorEnv{b: b, relay: relay, su: superuser(t), journal: "/system/newtricks/mirror", cli: a.NewtricksCLI, art: a}
	site := mirrorSite()
	for k, v := range map[string]string{
		"newtricks.mirror.rules":               "ck,rn",
		"newtricks.mirror.dest.namenode":       b.NameNodeAddr(),
		"newtricks.mirror.dest.socks-proxy":    relay.Addr(),
		"newtricks.mirror.dest.http":           b.NameNodeHTTPAddr(),
		"newtricks.mirror.proxy-user":          "mirror",
		"newtricks.mirror.concurrency":         "16",
		"newtricks.mirror.retry.interval":      "200ms",
		"newtricks.mirror.range-size":          "4194304",
		"newtricks.mirror.rule.ck.source":      "/ckpt/{job}/step_{step}",
		"newtricks.mirror.rule.ck.completion":  "marker",
		"newtricks.mirror.rule.ck.marker":      "_SUCCESS",
		"newtricks.mirror.rule.ck.retain":      "2",
		"newtricks.mirror.cleanup.delay":       "3s",
		"newtricks.mirror.rule.rn.source":      "/rn/{job}/step_{step}",
		"newtricks.mirror.rule.rn.completion":  "rename",
		"newtricks.mirror.rule.rn.temp":        "/rn/{job}/step_{step}.tmp",
		"newtricks.mirror.rule.rn.dest":        "/eval/{job}/{step}",
		"newtricks.ext.restart.backoff.max.ms": "1000",
	} {
		site[k] = v
	}
	for _, m := range extra {
		for k, v := range m {
			site[k] = v
		}
	}
	env.a = startClusterCore(t, a, extcluster.Options{Name: "dc-a", DataNodes: 1, NameNodeSite: site}, &env.lay)
	// Shared directories, as an admin would create them.
	for _, c := range []*cluster.Cluster{env.a, env.b} {
		su := env.hdfs(t, c, env.su)
		for _, d := range []string{"/ckpt", "/rn", "/eval", "/tmp/newtricks-mirror"} {
			if err := su.MkdirAll(d, 0o777); err != nil {
				t.Fatal(err)
			}
			if err := su.Chmod(d, 0o1777); err != nil {
				t.Fatal(err)
			}
		}
	}
	cc, err := extcluster.Dial(env.lay.NameNodeAPI)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	env.client = pb.NewMirrorClient(cc)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := extcluster.WaitServing(ctx, func(ctx context.Context) error {
		_, err := env.client.Status(ctx, &pb.MirrorStatusRequest{User: env.su})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return env
}

// startClusterCore is startCluster with mirrorSite also in core-site.xml: Hadoop reads the
// group mapping and proxy-user rules from the configuration UserGroupInformation was set up
// with, which the daemons build from core-site.
func startClusterCore(t *testing.T, a extcluster.Artifacts, o extcluster.Options, lay ...*extcluster.Layout) *cluster.Cluster {
	t.Helper()
	base := t.TempDir()
	cfg, l, err := extcluster.Setup(a, base, o)
	if err != nil {
		t.Fatal(err)
	}
	cfg.CoreSite = mirrorSite()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := cluster.Start(ctx, cfg)
	if err != nil {
		t.Fatalf("start cluster: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			var b bytes.Buffer
			c.DumpLogs(&b, 60)
			dumpExtLogs(&b, filepath.Join(base, "ext-logs"), 60)
			t.Logf("logs of cluster %s:\n%s", o.Name, b.String())
		}
		if err := c.Stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
		os.RemoveAll(l.SocketDir)
	})
	if len(lay) > 0 {
		*lay[0] = l
	}
	return c
}

func (env *mirrorEnv) hdfs(t *testing.T, c *cluster.Cluster, user string) *hdfs.Client {
	t.Helper()
	cl, err := c.Client(user)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

func mirrorWrite(t *testing.T, cl *hdfs.Client, p string, data []byte) {
	t.Helper()
	if err := cl.MkdirAll(path.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	w, err := cl.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	// colinmarc/hdfs allocates a block on any Write, even an empty one, and the NameNode
	// then never completes the file: write nothing for empty files.
	if len(data) > 0 {
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := closeWritten(w); err != nil {
		t.Fatal(err)
	}
}

// closeWritten closes w as the Java client does, waiting up to 30 s for the block reports
// (hdfsio.CloseFile sends the last block on every retry).
func closeWritten(w *hdfs.FileWriter) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return hdfsio.CloseFile(ctx, w)
}

func randBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

// wait blocks on the Mirror.Wait stream until the checkpoint is terminal.
func (env *mirrorEnv) wait(t *testing.T, user, rule, job string, step int64, timeout time.Duration) *pb.CheckpointStatus {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var last *pb.CheckpointStatus
	for done := false; !done; {
		// namenode-ext may be restarting (kill test): Unavailable is retried.
		st, err := env.client.Wait(ctx, &pb.MirrorWaitRequest{User: user, Ref: &pb.CheckpointRef{Rule: rule, Job: job, Step: step}, IntervalMs: 200})
		for err == nil {
			var m *pb.CheckpointStatus
			if m, err = st.Recv(); err == nil {
				last = m
			}
		}
		switch {
		case err == io.EOF:
			done = true
		case status.Code(err) == codes.Unavailable && ctx.Err() == nil:
			time.Sleep(200 * time.Millisecond)
		default:
			t.Fatalf("wait %s/%d: %v (last %v)", job, step, err, last)
		}
	}
	if last == nil {
		t.Fatalf("wait %s/%d: no status", job, step)
	}
	return last
}

type treeEntry struct {
	mode  os.FileMode
	owner string
	group string
	mtime int64
	size  int64
	data  []byte
}

// tree reads every file and directory below root (as the superuser).
func mirrorTree(t *testing.T, cl *hdfs.Client, root string, skip string) map[string]treeEntry {
	t.Helper()
	out := map[string]treeEntry{}
	err := cl.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, root), "/")
		if skip != "" && rel == skip {
			return nil
		}
		hfi := fi.(*hdfs.FileInfo)
		e := treeEntry{mode: fi.Mode(), owner: hfi.Owner(), group: hfi.OwnerGroup(), mtime: fi.ModTime().UnixMilli(), size: fi.Size()}
		if !fi.IsDir() {
			b, err := cl.ReadFile(p)
			if err != nil {
				return err
			}
			e.data = b
		}
		out[rel] = e
		return nil
	})
	if err != nil {
		t.Fatalf("walk %s: %v", root, err)
	}
	return out
}

func TestMirror(t *testing.T) {
	env := startMirrorEnv(t, wan.Link{Delay: 5 * time.Millisecond, Rate: 16 << 20})
	alice := env.hdfs(t, env.a, "alice")
	suA := env.hdfs(t, env.a, env.su)
	suB := env.hdfs(t, env.b, env.su)

	t.Run("BytesPermsAndNoPartialView", func(t *testing.T) {
		const dir = "/ckpt/llama/step_100"
		dest := dir
		// A reader on dc-b polls for the checkpoint and must see it whole or not at all.
		var seen atomic.Int64
		var partial atomic.Value
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		const want = 23 // 21 files + marker + manifest
		go func() {
			defer wg.Done()
			reader, err := env.b.Client(env.su) // optim/ is 0750: read as the superuser
			if err != nil {
				partial.Store(err.Error())
				return
			}
			defer reader.Close()
			for {
				select {
				case <-stop:
					return
				default:
				}
				n := 0
				err := reader.Walk(dest, func(p string, fi os.FileInfo, err error) error {
					if err != nil {
						return err
					}
					if !fi.IsDir() {
						n++
					}
					return nil
				})
				if err == nil {
					seen.Add(1)
					if n != want {
						partial.Store(fmt.Sprintf("reader saw %d of %d files", n, want))
					}
				}
				time.Sleep(5 * time.Millisecond)
			}
		}()
		files := map[string][]byte{}
		for i := 0; i < 18; i++ {
			files[fmt.Sprintf("model/tensor_%03d.pt", i)] = randBytes(15_000 + i*100)
		}
		files["optim/shard_0.bin"] = randBytes(3<<20 + 12345) // 4 blocks of 1 MiB
		files["optim/empty"] = nil
		files["config.json"] = []byte(`{"step":100}`)
		names := make([]string, 0, len(files))
		for n := range files {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			mirrorWrite(t, alice, dir+"/"+n, files[n])
		}
		if err := alice.Chmod(dir+"/config.json", 0o640); err != nil {
			t.Fatal(err)
		}
		if err := alice.Chown(dir+"/optim/shard_0.bin", "alice", "ml"); err != nil {
			t.Fatal(err)
		}
		if err := alice.Chmod(dir+"/optim", 0o750); err != nil {
			t.Fatal(err)
		}
		mirrorWrite(t, alice, dir+"/_SUCCESS", nil)
		st := env.wait(t, "alice", "ck", "llama", 100, 2*time.Minute)
		// Let the reader see the committed checkpoint a few times, then stop it.
		eventually(t, 10*time.Second, "the polling reader sees the checkpoint", func() error {
			if n := seen.Load(); n < 3 {
				return fmt.Errorf("seen %d times", n)
			}
			return nil
		})
		close(stop)
		wg.Wait()
		if st.State != pb.CheckpointStatus_COMMITTED {
			t.Fatalf("state %v: %s", st.State, st.Error)
		}
		t.Logf("committed: %d files, %d bytes, lag %d ms", st.FilesDone, st.BytesDone, st.LagMs)
		if p := partial.Load(); p != nil {
			t.Fatalf("partial view: %v", p)
		}
		src := mirrorTree(t, suA, dir, "")
		dst := mirrorTree(t, suB, dest, ".newtricks-mirror.json")
		if len(src) != len(dst) {
			var extra []string
			for rel := range dst {
				if _, ok := src[rel]; !ok {
					extra = append(extra, "dc-b:"+rel)
				}
			}
			for rel := range src {
				if _, ok := dst[rel]; !ok {
					extra = append(extra, "dc-a:"+rel)
				}
			}
			t.Fatalf("dc-a has %d entries, dc-b %d (only on one side: %q)", len(src), len(dst), extra)
		}
		for rel, s := range src {
			d, ok := dst[rel]
			if !ok {
				t.Errorf("%s missing on dc-b", rel)
				continue
			}
			if !bytes.Equal(s.data, d.data) {
				t.Errorf("%s: bytes differ", rel)
			}
			if s.mode != d.mode || s.owner != d.owner || s.group != d.group || s.mtime != d.mtime {
				t.Errorf("%s: dc-a %v %s:%s mtime %d, dc-b %v %s:%s mtime %d", rel, s.mode, s.owner, s.group, s.mtime, d.mode, d.owner, d.group, d.mtime)
			}
		}
		top, _ := suA.Stat(dir)
		topB, _ := suB.Stat(dest)
		if top.Mode() != topB.Mode() || top.(*hdfs.FileInfo).Owner() != topB.(*hdfs.FileInfo).Owner() {
			t.Errorf("checkpoint dir: dc-a %v, dc-b %v", top.Mode(), topB.Mode())
		}
		if _, err := suB.Stat(dest + "/.newtricks-mirror.json"); err != nil {
			t.Errorf("manifest: %v", err)
		}
		t.Logf("the polling reader saw the checkpoint %d times, always whole", seen.Load())
	})

	t.Run("LargeFileInRanges", func(t *testing.T) {
		dir := "/ckpt/big/step_3"
		data := randBytes(21<<20 + 1234) // 6 ranges of 4 MiB, 22 blocks of 1 MiB
		mirrorWrite(t, alice, dir+"/shard.bin", data)
		mirrorWrite(t, alice, dir+"/_SUCCESS", nil)
		st := env.wait(t, "alice", "ck", "big", 3, 2*time.Minute)
		if st.State != pb.CheckpointStatus_COMMITTED {
			t.Fatalf("%v %s", st.State, st.Error)
		}
		got, err := suB.ReadFile(dir + "/shard.bin")
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("shard.bin on dc-b differs (%d of %d bytes): %v", len(got), len(data), err)
		}
		entries, err := suB.ReadDir(dir)
		if err != nil || len(entries) != 3 { // shard.bin, _SUCCESS, manifest: no range files left
			t.Fatalf("dc-b %s holds %d entries: %v", dir, len(entries), err)
		}
		t.Logf("21 MiB file copied as ranges and joined; lag %d ms", st.LagMs)
	})

	t.Run("RenameCompletion", func(t *testing.T) {
		tmp, final := "/rn/gpt/step_7.tmp", "/rn/gpt/step_7"
		data := randBytes(200_000)
		mirrorWrite(t, alice, tmp+"/a.bin", data)
		mirrorWrite(t, alice, tmp+"/b/c.bin", data[:1000])
		if err := alice.Rename(tmp, final); err != nil {
			t.Fatal(err)
		}
		st := env.wait(t, "alice", "rn", "gpt", 7, time.Minute)
		if st.State != pb.CheckpointStatus_COMMITTED || st.DestPath != "/eval/gpt/7" {
			t.Fatalf("status %v", st)
		}
		got, err := suB.ReadFile("/eval/gpt/7/a.bin")
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("a.bin on dc-b: %v", err)
		}
	})

	t.Run("SourceChangedMidCopy", func(t *testing.T) {
		dir := "/ckpt/bad/step_1"
		mirrorWrite(t, alice, dir+"/big.bin", randBytes(24<<20)) // 1.5 s on the 16 MiB/s link
		// Append while the mirror streams the file.
		eventually(t, 30*time.Second, "big.bin in flight", func() error {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			st, err := env.client.Status(ctx, &pb.MirrorStatusRequest{User: "alice", Job: "bad"})
			if err != nil {
				return err
			}
			if len(st.Checkpoints) == 0 || st.Checkpoints[0].FilesInFlight == 0 {
				return fmt.Errorf("not in flight: %v", st.Checkpoints)
			}
			return nil
		})
		w, err := alice.Append(dir + "/big.bin")
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte("late bytes"))
		closeWritten(w)
		mirrorWrite(t, alice, dir+"/_SUCCESS", nil)
		st := env.wait(t, "alice", "ck", "bad", 1, time.Minute)
		if st.State != pb.CheckpointStatus_FAILED || !strings.Contains(st.Error, "source changed") {
			t.Fatalf("want FAILED with 'source changed', got %v: %s", st.State, st.Error)
		}
		if _, err := suB.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("failed checkpoint visible on dc-b: %v", err)
		}
		t.Logf("failed as expected: %s", st.Error)
	})

	t.Run("UrgentPreemptsBulk", func(t *testing.T) {
		bulk, urgent := "/ckpt/train/step_10", "/ckpt/train/step_11"
		// 48 MiB of bulk: ~3 s on the 16 MiB/s link.
		for i := 0; i < 12; i++ {
			mirrorWrite(t, alice, fmt.Sprintf("%s/shard_%02d.bin", bulk, i), randBytes(4<<20))
		}
		mirrorWrite(t, alice, bulk+"/_SUCCESS", nil)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := env.client.Urgent(ctx, &pb.MirrorUrgentRequest{User: "alice", Ref: &pb.CheckpointRef{Rule: "ck", Job: "train", Step: 11}}); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 4; i++ {
			mirrorWrite(t, alice, fmt.Sprintf("%s/t_%d.pt", urgent, i), randBytes(15_000))
		}
		mirrorWrite(t, alice, urgent+"/_SUCCESS", nil)
		su := env.wait(t, "alice", "ck", "train", 11, time.Minute)
		sb := env.wait(t, "alice", "ck", "train", 10, 2*time.Minute)
		if su.State != pb.CheckpointStatus_COMMITTED || sb.State != pb.CheckpointStatus_COMMITTED {
			t.Fatalf("states %v %v (%s %s)", su.State, sb.State, su.Error, sb.Error)
		}
		t.Logf("urgent committed %d ms after it completed; bulk committed %d ms after the urgent one",
			su.LagMs, sb.CommittedMs-su.CommittedMs)
		if su.CommittedMs >= sb.CommittedMs {
			t.Fatalf("urgent checkpoint committed at %d, not before the bulk one (%d)", su.CommittedMs, sb.CommittedMs)
		}
	})

	t.Run("Retention", func(t *testing.T) {
		var last *pb.CheckpointStatus
		for _, step := range []int64{1, 2, 3} {
			dir := fmt.Sprintf("/ckpt/ret/step_%d", step)
			mirrorWrite(t, alice, dir+"/w.pt", randBytes(1000))
			mirrorWrite(t, alice, dir+"/_SUCCESS", nil)
			if last = env.wait(t, "alice", "ck", "ret", step, time.Minute); last.State != pb.CheckpointStatus_COMMITTED {
				t.Fatalf("step %d: %v %s", step, last.State, last.Error)
			}
		}
		// Retention waits newtricks.mirror.cleanup.delay (3s here) after the commit, while
		// evaluators start reading the new checkpoint.
		_, err := suB.Stat("/ckpt/ret/step_1")
		if since := time.Since(time.UnixMilli(last.CommittedMs)); err != nil && since < 3*time.Second {
			t.Fatalf("step 1 retired %v after step 3's commit, within cleanup.delay: %v", since, err)
		}
		eventually(t, 20*time.Second, "step 1 retired on dc-b", func() error {
			if _, err := suB.Stat("/ckpt/ret/step_1"); !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("still there: %v", err)
			}
			return nil
		})
		for _, step := range []int{2, 3} {
			if _, err := suB.Stat(fmt.Sprintf("/ckpt/ret/step_%d", step)); err != nil {
				t.Errorf("step %d gone: %v", step, err)
			}
		}
	})

	t.Run("KillResumeWithoutRecopy", func(t *testing.T) {
		dir := "/ckpt/crash/step_5"
		for i := 0; i < 120; i++ {
			mirrorWrite(t, alice, fmt.Sprintf("%s/t_%03d.pt", dir, i), randBytes(15_000))
		}
		mirrorWrite(t, alice, dir+"/big.bin", randBytes(32<<20)) // 2 s: the kill lands mid-copy
		// Wait until the journal holds some verified files, then kill -9 namenode-ext.
		var journaled map[string]bool
		var id string
		eventually(t, time.Minute, "files journaled", func() error {
			var err error
			id, journaled, err = readJournal(suA, env.journal, "ck.crash.5.")
			if err != nil {
				return err
			}
			if len(journaled) < 20 {
				return fmt.Errorf("%d journaled", len(journaled))
			}
			return nil
		})
		pids, err := env.a.KillChildren(cluster.NameNode, "namenode-ext")
		if err != nil || len(pids) == 0 {
			t.Fatalf("kill namenode-ext: %v %v", pids, err)
		}
		_, journaled, err = readJournal(suA, env.journal, "ck.crash.5.")
		if err != nil {
			t.Fatal(err)
		}
		// The file ids of the verified copies in staging on dc-b: a recopy replaces the file.
		staging := "/tmp/newtricks-mirror/" + id
		before := map[string]uint64{}
		for rel := range journaled {
			fi, err := suB.Stat(staging + "/" + rel)
			if err != nil {
				t.Fatalf("journaled %s not in staging: %v", rel, err)
			}
			before[rel] = fileID(fi)
		}
		t.Logf("killed namenode-ext %v with %d files journaled", pids, len(journaled))
		mirrorWrite(t, alice, dir+"/_SUCCESS", nil)
		st := env.wait(t, "alice", "ck", "crash", 5, 2*time.Minute)
		if st.State != pb.CheckpointStatus_COMMITTED {
			t.Fatalf("after restart: %v %s", st.State, st.Error)
		}
		recopied := 0
		for rel, id := range before {
			fi, err := suB.Stat(dir + "/" + rel)
			if err != nil {
				t.Fatalf("%s on dc-b: %v", rel, err)
			}
			if fileID(fi) != id {
				recopied++
			}
		}
		t.Logf("resume: %d of %d verified files recopied; %d files committed", recopied, len(before), st.FilesDone)
		if recopied != 0 {
			t.Fatalf("%d verified files were copied again", recopied)
		}
		if v := env.metric(t, "newtricks_mirror_relists_total"); v != "0" {
			t.Errorf("newtricks_mirror_relists_total = %q after kill -9, want 0 (resumed from the event stream)", v)
		}
		src := mirrorTree(t, suA, dir, "")
		dst := mirrorTree(t, suB, dir, ".newtricks-mirror.json")
		for rel, s := range src {
			if !bytes.Equal(s.data, dst[rel].data) {
				t.Errorf("%s differs after resume", rel)
			}
		}
	})

	t.Run("SourceNameNodeRestartResumes", func(t *testing.T) {
		// dc-a's NameNode restarts mid-mirror (namenode-ext is its child and goes with it): the
		// mirror resumes from its journal without copying a verified file again, and commits the
		// checkpoint once, whole.
		dir := "/ckpt/nnr/step_1"
		want := map[string][]byte{}
		for i := 0; i < 120; i++ {
			rel := fmt.Sprintf("t_%03d.pt", i)
			want[rel] = randBytes(15_000)
			mirrorWrite(t, alice, dir+"/"+rel, want[rel])
		}
		want["big.bin"] = randBytes(32 << 20) // 2 s on the link: the restart lands mid-copy
		mirrorWrite(t, alice, dir+"/big.bin", want["big.bin"])
		var journaled map[string]bool
		var id string
		eventually(t, time.Minute, "files journaled", func() error {
			var err error
			if id, journaled, err = readJournal(suA, env.journal, "ck.nnr.1."); err != nil {
				return err
			}
			if len(journaled) < 20 {
				return fmt.Errorf("%d journaled", len(journaled))
			}
			return nil
		})
		staging := "/tmp/newtricks-mirror/" + id
		before := map[string]uint64{}
		for rel := range journaled {
			fi, err := suB.Stat(staging + "/" + rel)
			if err != nil {
				t.Fatalf("journaled %s not in staging: %v", rel, err)
			}
			before[rel] = fileID(fi)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		began := time.Now()
		if err := env.a.RestartNameNode(ctx); err != nil {
			t.Fatal(err)
		}
		t.Logf("dc-a NameNode restarted in %v with %d files journaled", time.Since(began).Round(time.Millisecond), len(before))
		// Clients of the restarted NameNode, also for the subtests after this one.
		alice2, err := env.a.Client("alice")
		if err != nil {
			t.Fatal(err)
		}
		suA2, err := env.a.Client(env.su)
		if err != nil {
			t.Fatal(err)
		}
		alice, suA = alice2, suA2
		// The rest of the checkpoint arrives after the restart, through the event stream.
		for i := 120; i < 130; i++ {
			rel := fmt.Sprintf("t_%03d.pt", i)
			want[rel] = randBytes(15_000)
			mirrorWrite(t, alice2, dir+"/"+rel, want[rel])
		}
		mirrorWrite(t, alice2, dir+"/_SUCCESS", nil)
		want["_SUCCESS"] = nil
		st := env.wait(t, "alice", "ck", "nnr", 1, 3*time.Minute)
		if st.State != pb.CheckpointStatus_COMMITTED {
			t.Fatalf("after the restart: %v %s", st.State, st.Error)
		}
		recopied := 0
		for rel, fid := range before {
			fi, err := suB.Stat(dir + "/" + rel)
			if err != nil {
				t.Fatalf("%s on dc-b: %v", rel, err)
			}
			if fileID(fi) != fid {
				recopied++
			}
		}
		t.Logf("resume after the NameNode restart: %d of %d verified files recopied; %d files committed, %d retries", recopied, len(before), st.FilesDone, st.Retries)
		if recopied != 0 {
			t.Fatalf("%d verified files were copied again", recopied)
		}
		// Committed once and whole: exactly the source's files, one manifest naming the journal's
		// id, no second mirror of the checkpoint in the journal, nothing left in staging.
		got := mirrorTree(t, suB, dir, "")
		m, err := suB.ReadFile(dir + "/.newtricks-mirror.json")
		if err != nil || !strings.Contains(string(m), `"id": "`+id+`"`) {
			t.Fatalf("manifest of %s does not name journal id %s: %v", dir, id, err)
		}
		for rel, b := range want {
			if !bytes.Equal(got[rel].data, b) {
				t.Errorf("%s differs on dc-b", rel)
			}
		}
		if len(got) != len(want)+2 { // + the manifest and the directory itself
			t.Errorf("dc-b holds %d entries, want %d", len(got), len(want)+2)
		}
		ids, err := suA2.ReadDir(env.journal)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ids {
			if strings.HasPrefix(d.Name(), "ck.nnr.1.") && d.Name() != id {
				t.Errorf("a second mirror of the checkpoint was started: %s", d.Name())
			}
		}
		if _, err := suB.Stat(staging); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("staging %s left behind: %v", staging, err)
		}
		// The event stream resumed where the journal ended: nothing was listed again.
		if v := env.metric(t, "newtricks_mirror_relists_total"); v != "0" {
			t.Errorf("newtricks_mirror_relists_total = %q after the restart, want 0 (resumed from the event stream)", v)
		}
	})

	t.Run("DestinationDownThenUp", func(t *testing.T) {
		dir := "/ckpt/down/step_1"
		for i := 0; i < 10; i++ {
			mirrorWrite(t, alice, fmt.Sprintf("%s/t_%d.pt", dir, i), randBytes(20_000))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- env.b.RestartNameNode(ctx) }()
		time.Sleep(200 * time.Millisecond)
		mirrorWrite(t, alice, dir+"/_SUCCESS", nil)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		suB2 := env.hdfs(t, env.b, env.su)
		st := env.wait(t, "alice", "ck", "down", 1, 2*time.Minute)
		if st.State != pb.CheckpointStatus_COMMITTED {
			t.Fatalf("%v %s", st.State, st.Error)
		}
		for i := 0; i < 10; i++ {
			a, _ := suA.ReadFile(fmt.Sprintf("%s/t_%d.pt", dir, i))
			b, err := suB2.ReadFile(fmt.Sprintf("%s/t_%d.pt", dir, i))
			if err != nil || !bytes.Equal(a, b) {
				t.Fatalf("t_%d after dc-b restart: %v", i, err)
			}
		}
		t.Logf("committed after dc-b came back; %d retries", st.Retries)
	})

	t.Run("DestinationQuotaRetriedThenCommits", func(t *testing.T) {
		// dc-b's destination directory has a namespace quota and a space quota the checkpoint
		// exceeds: the commit is refused, status and /metrics say why, nothing appears at the
		// destination, and it is retried; once an admin lifts the quotas it commits.
		const parent, dir = "/ckpt/quota", "/ckpt/quota/step_1"
		aliceB := env.hdfs(t, env.b, "alice")
		if err := aliceB.MkdirAll(parent, 0o755); err != nil {
			t.Fatal(err)
		}
		dfsadmin(t, env, env.b, "-setQuota", "3", parent)
		dfsadmin(t, env, env.b, "-setSpaceQuota", "1048576", parent)
		want := map[string][]byte{}
		for i := 0; i < 6; i++ {
			rel := fmt.Sprintf("t_%d.pt", i)
			want[rel] = randBytes(400_000)
			mirrorWrite(t, alice, dir+"/"+rel, want[rel])
		}
		mirrorWrite(t, alice, dir+"/_SUCCESS", nil)
		refused := func(what string) {
			t.Helper()
			eventually(t, time.Minute, "commit refused for "+what, func() error {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				st, err := env.client.Status(ctx, &pb.MirrorStatusRequest{User: "alice", Job: "quota"})
				if err != nil {
					return err
				}
				if len(st.Checkpoints) != 1 {
					return fmt.Errorf("%d checkpoints", len(st.Checkpoints))
				}
				c := st.Checkpoints[0]
				if c.State == pb.CheckpointStatus_COMMITTED || c.State == pb.CheckpointStatus_FAILED {
					return fmt.Errorf("given up or committed under the quota: %v %s", c.State, c.Error)
				}
				if !strings.Contains(c.Error, "dc-b out of space or quota") || !strings.Contains(c.Error, what) {
					return fmt.Errorf("status %v: %q", c.State, c.Error)
				}
				t.Logf("status while refused: %v, %d retries: %s", c.State, c.Retries, c.Error)
				return nil
			})
			// A client idle through the wait above may find its NameNode connection closed
			// (broken pipe, seen once), and colinmarc/hdfs then holds off that NameNode for
			// 5 s: look with a fresh client.
			if _, err := env.hdfs(t, env.b, env.su).Stat(dir); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("%s visible on dc-b while the quota refuses it: %v", dir, err)
			}
		}
		refused("NSQuotaExceededException")
		dfsadmin(t, env, env.b, "-clrQuota", parent)
		refused("DSQuotaExceededException")
		metric := func() string { return env.metric(t, "newtricks_mirror_dest_full_total") }
		if v := metric(); v == "" || v == "0" {
			t.Errorf("newtricks_mirror_dest_full_total = %q, want > 0", v)
		}
		dfsadmin(t, env, env.b, "-clrSpaceQuota", parent)
		st := env.wait(t, "alice", "ck", "quota", 1, 2*time.Minute)
		if st.State != pb.CheckpointStatus_COMMITTED {
			t.Fatalf("after the quotas were lifted: %v %s", st.State, st.Error)
		}
		readB := env.hdfs(t, env.b, env.su) // fresh: suB may have idled out during the wait
		for rel, b := range want {
			got, err := readB.ReadFile(dir + "/" + rel)
			if err != nil || !bytes.Equal(got, b) {
				t.Fatalf("%s after the commit: %v", rel, err)
			}
		}
		t.Logf("committed once the quotas were lifted; %d retries, dest_full_total %s", st.Retries, metric())
	})

	t.Run("StatusAndPermissions", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		mine, err := env.client.Status(ctx, &pb.MirrorStatusRequest{User: "alice"})
		if err != nil || len(mine.Checkpoints) == 0 {
			t.Fatalf("alice's status: %v %v", mine, err)
		}
		bobs, err := env.client.Status(ctx, &pb.MirrorStatusRequest{User: "bob"})
		if err != nil || len(bobs.Checkpoints) != 0 {
			t.Fatalf("bob sees alice's checkpoints: %v %v", bobs, err)
		}
		if _, err := env.client.Urgent(ctx, &pb.MirrorUrgentRequest{User: "bob", Ref: &pb.CheckpointRef{Rule: "ck", Job: "llama", Step: 100}}); err == nil {
			t.Fatal("bob marked alice's checkpoint urgent")
		}
		if _, err := env.client.Status(ctx, &pb.MirrorStatusRequest{}); err == nil {
			t.Fatal("status without a user accepted")
		}
		t.Logf("link: %v", mine.Link)

		// Metrics on namenode-ext's /metrics.
		resp, err := http.Get("http://" + env.lay.NameNodeMetrics + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, m := range []string{"newtricks_mirror_bytes_total", "newtricks_mirror_commit_lag_seconds_count", "newtricks_mirror_link_utilization",
			"newtricks_mirror_files_in_flight", "newtricks_mirror_retries_total", "newtricks_mirror_checkpoints_committed_total"} {
			if !strings.Contains(string(body), m) {
				t.Errorf("/metrics lacks %s", m)
			}
		}

		// The CLI: status and wait as JSON.
		out, err := exec.CommandContext(ctx, env.cli, "mirror", "status", "--addr", env.lay.NameNodeAPI, "--user", "alice", "--job", "llama", "--json").Output()
		if err != nil {
			t.Fatalf("newtricks mirror status: %v", err)
		}
		var st struct {
			Checkpoints []struct {
				State     string `json:"state"`
				FilesDone int64  `json:"files_done"`
			} `json:"checkpoints"`
		}
		if err := json.Unmarshal(out, &st); err != nil || len(st.Checkpoints) != 1 || st.Checkpoints[0].State != "COMMITTED" {
			t.Fatalf("status --json: %v %s", err, out)
		}
		out, err = exec.CommandContext(ctx, env.cli, "mirror", "wait", "--addr", env.lay.NameNodeAPI, "--user", "alice", "--job", "llama", "--step", "100").Output()
		if err != nil || !strings.Contains(string(out), "committed on dc-b at /ckpt/llama/step_100") {
			t.Fatalf("newtricks mirror wait: %v %s", err, out)
		}
		if err := exec.CommandContext(ctx, env.cli, "mirror", "wait", "--addr", env.lay.NameNodeAPI, "--user", "alice", "--job", "bad", "--step", "1").Run(); err == nil {
			t.Fatal("mirror wait on a failed checkpoint exited 0")
		}
	})
}

// metric returns the value of a sample on namenode-ext's /metrics ("" if absent).
func (env *mirrorEnv) metric(t *testing.T, name string) string {
	t.Helper()
	resp, err := http.Get("http://" + env.lay.NameNodeMetrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, l := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(l, name+" ") {
			return strings.TrimPrefix(l, name+" ")
		}
	}
	return ""
}

// dfsadmin runs Hadoop's own DFSAdmin against cluster c as the superuser, as an admin would.
func dfsadmin(t *testing.T, env *mirrorEnv, c *cluster.Cluster, args ...string) {
	t.Helper()
	lib := env.art.HadoopLibDir
	if lib == "" {
		lib = cluster.DefaultHadoopLib()
	}
	jargs := append([]string{"-XX:+IgnoreUnrecognizedVMOptions", "--add-opens=java.base/java.lang=ALL-UNNAMED",
		"-cp", c.DataNodes()[0].ConfDir + ":" + filepath.Join(lib, "*"),
		"org.apache.hadoop.hdfs.tools.DFSAdmin", "-fs", c.URI()}, args...)
	cmd := exec.Command("java", jargs...)
	cmd.Env = append(os.Environ(), "HADOOP_USER_NAME="+env.su)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("dfsadmin %v: %v\n%s", args, err, out)
	}
}

func fileID(fi os.FileInfo) uint64 {
	if s, ok := fi.Sys().(interface{ GetFileId() uint64 }); ok {
		return s.GetFileId()
	}
	return 0
}

// readJournal returns the journal id of the checkpoint whose id starts with prefix and the
// files its segments hold.
func readJournal(cl *hdfs.Client, dir, prefix string) (string, map[string]bool, error) {
	dirs, err := cl.ReadDir(dir)
	if err != nil {
		return "", nil, err
	}
	for _, d := range dirs {
		if !strings.HasPrefix(d.Name(), prefix) {
			continue
		}
		files := map[string]bool{}
		segs, err := cl.ReadDir(dir + "/" + d.Name())
		if err != nil {
			return "", nil, err
		}
		for _, s := range segs {
			if !strings.HasPrefix(s.Name(), "v-") {
				continue
			}
			b, err := cl.ReadFile(dir + "/" + d.Name() + "/" + s.Name())
			if err != nil {
				return "", nil, err
			}
			sc := bufio.NewScanner(bytes.NewReader(b))
			for sc.Scan() {
				var r struct {
					P string `json:"p"`
				}
				if json.Unmarshal(sc.Bytes(), &r) == nil {
					files[r.P] = true
				}
			}
		}
		return d.Name(), files, nil
	}
	return "", nil, fmt.Errorf("no journal entry %s*", prefix)
}
