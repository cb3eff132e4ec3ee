package conformance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/user"
	"strconv"
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
	"github.com/newtricks/newtricks/namenode-ext/hotspot"
	"github.com/newtricks/newtricks/namenode-ext/hotspot/hintclient"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// Issue 25 ("Hostile callers"), namenode-ext's part: what an ordinary user (bob, alice) can do
// to namenode-ext under simple authentication, each case as it was reproduced on a real
// cluster, and what must hold instead.

// vmRSS is namenode-ext's resident set in bytes (/proc/<pid>/status VmRSS).
func vmRSS(t *testing.T, c *cluster.Cluster) int64 {
	t.Helper()
	pids, err := c.Children(cluster.NameNode, "namenode-ext")
	if err != nil || len(pids) != 1 {
		t.Fatalf("namenode-ext pids %v: %v", pids, err)
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pids[0]))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// floodRSSBound is what namenode-ext may hold after the flood of (a): it started at ~25 MB;
// before the fix it kept 3.0 GB.
const floodRSSBound = 256 << 20

func TestHostileNNMirror(t *testing.T) {
	env := startMirrorEnv(t, wan.Link{Delay: time.Millisecond}, map[string]string{
		"newtricks.mirror.rules":               "ck,rn,sig,sh",
		"newtricks.mirror.rule.sig.source":     "/sig/{job}/step_{step}",
		"newtricks.mirror.rule.sig.completion": "signal",
		// A shared directory where job and step are one component: anyone can name a
		// checkpoint after another user's job.
		"newtricks.mirror.rule.sh.source":     "/shared/{job}-step_{step}",
		"newtricks.mirror.rule.sh.completion": "marker",
		"newtricks.mirror.rule.sh.retain":     "1",
	})
	for _, c := range []*cluster.Cluster{env.a, env.b} {
		su := env.hdfs(t, c, env.su)
		for _, d := range []string{"/sig", "/shared"} {
			if err := su.MkdirAll(d, 0o777); err != nil {
				t.Fatal(err)
			}
			if err := su.Chmod(d, 0o1777); err != nil {
				t.Fatal(err)
			}
		}
	}
	alice := env.hdfs(t, env.a, "alice")
	bobA := env.hdfs(t, env.a, "bob")
	suB := env.hdfs(t, env.b, env.su)
	ckpt := func(t *testing.T, cl *hdfs.Client, dir string) {
		t.Helper()
		mirrorWrite(t, cl, dir+"/model.pt", randBytes(20_000))
		mirrorWrite(t, cl, dir+"/_SUCCESS", nil)
	}
	ctx := context.Background()

	// Cases that leave the old code's mirror unusable (the flood's memory, Complete's entries)
	// run last, so that each case is judged on its own there too.
	t.Run("RetentionKeepsOtherOwners", func(t *testing.T) {
		// (c) bob's /shared/alicejob-step_999 is job "alicejob" of rule sh; its commit retired
		// alice's older alicejob mirrors on dc-b (as alice).
		ckpt(t, alice, "/shared/alicejob-step_1")
		if st := env.wait(t, "alice", "sh", "alicejob", 1, 2*time.Minute); st.State != pb.CheckpointStatus_COMMITTED {
			t.Fatalf("alice step 1: %v %s", st.State, st.Error)
		}
		ckpt(t, alice, "/shared/alicejob-step_2")
		if st := env.wait(t, "alice", "sh", "alicejob", 2, 2*time.Minute); st.State != pb.CheckpointStatus_COMMITTED {
			t.Fatalf("alice step 2: %v %s", st.State, st.Error)
		}
		// Retention still works for the owner: step 1 goes (retain 1) cleanup.delay after.
		eventually(t, 30*time.Second, "alice's own older mirror retired", func() error {
			if _, err := suB.Stat("/shared/alicejob-step_1"); !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("step 1 still on dc-b (%v)", err)
			}
			return nil
		})
		ckpt(t, bobA, "/shared/alicejob-step_999")
		if st := env.wait(t, "bob", "sh", "alicejob", 999, 2*time.Minute); st.State != pb.CheckpointStatus_COMMITTED {
			t.Fatalf("bob's step 999: %v %s", st.State, st.Error)
		}
		time.Sleep(3*time.Second + 5*time.Second) // cleanup.delay, and margin for its deletes
		if _, err := suB.Stat("/shared/alicejob-step_2/model.pt"); err != nil {
			t.Fatalf("alice's mirror on dc-b after bob's commit: %v", err)
		}
		st, err := env.client.Status(ctx, &pb.MirrorStatusRequest{User: "alice", Rule: "sh", Job: "alicejob"})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range st.Checkpoints {
			if c.Ref.Step == 2 && c.State != pb.CheckpointStatus_COMMITTED {
				t.Fatalf("alice's step 2 is %v", c.State)
			}
		}
	})

	t.Run("SuperuserCheckpointRefused", func(t *testing.T) {
		// A checkpoint owned by the superuser is not mirrored as the superuser (finding 8).
		ckpt(t, env.hdfs(t, env.a, env.su), "/ckpt/rootjob/step_1")
		st := env.wait(t, env.su, "ck", "rootjob", 1, time.Minute)
		if st.State != pb.CheckpointStatus_FAILED || !strings.Contains(st.Error, "allow-superuser") {
			t.Fatalf("superuser's checkpoint: %v %q", st.State, st.Error)
		}
		if _, err := suB.Stat("/ckpt/rootjob/step_1"); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("superuser's checkpoint on dc-b: %v", err)
		}
	})

	t.Run("UrgentFloodBounded", func(t *testing.T) {
		// (a) 2,000 Urgent calls with 1 MiB job names (finding 3: 23 MB -> 3.0 GB RSS in 20 s,
		// kept). Now each is INVALID_ARGUMENT and nothing is kept.
		before := vmRSS(t, env.a)
		big := strings.Repeat("j", 1<<20)
		var refused, other atomic.Int64
		var firstOther atomic.Value
		var wg sync.WaitGroup
		start := time.Now()
		jobs := make(chan int)
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range jobs {
					cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
					_, err := env.client.Urgent(cctx, &pb.MirrorUrgentRequest{User: "bob",
						Ref: &pb.CheckpointRef{Rule: "ck", Job: big[:len(big)-4] + fmt.Sprintf("%04d", i), Step: int64(i)}})
					cancel()
					if status.Code(err) == codes.InvalidArgument {
						refused.Add(1)
					} else {
						other.Add(1)
						firstOther.CompareAndSwap(nil, fmt.Sprint(err))
					}
				}
			}()
		}
		for i := 0; i < 2000 && time.Since(start) < 90*time.Second; i++ {
			jobs <- i
		}
		close(jobs)
		wg.Wait()
		time.Sleep(2 * time.Second)
		after := vmRSS(t, env.a)
		t.Logf("%d Urgent calls of 1 MiB in %v: %d refused, %d otherwise (%v); RSS %d MB -> %d MB",
			refused.Load()+other.Load(), time.Since(start).Round(time.Millisecond), refused.Load(), other.Load(),
			firstOther.Load(), before>>20, after>>20)
		if other.Load() != 0 {
			t.Errorf("%d Urgent calls with 1 MiB job names not refused (first: %v)", other.Load(), firstOther.Load())
		}
		if after > floodRSSBound {
			t.Errorf("namenode-ext RSS %d MB after the flood, bound %d MB", after>>20, floodRSSBound>>20)
		}
		// bob may not mark urgent a checkpoint under alice's own directory either.
		if err := alice.MkdirAll("/ckpt/alicepriv", 0o755); err != nil {
			t.Fatal(err)
		}
		_, err := env.client.Urgent(ctx, &pb.MirrorUrgentRequest{User: "bob", Ref: &pb.CheckpointRef{Rule: "ck", Job: "alicepriv", Step: 1}})
		// /ckpt/alicepriv/step_1 does not exist: its nearest ancestor is alice's 0755 directory.
		if status.Code(err) != codes.PermissionDenied {
			t.Errorf("bob's Urgent under alice's directory: %v", err)
		}
		// The mirror still mirrors alice's next checkpoint.
		ckpt(t, alice, "/ckpt/afterflood/step_1")
		if st := env.wait(t, "alice", "ck", "afterflood", 1, 2*time.Minute); st.State != pb.CheckpointStatus_COMMITTED {
			t.Fatalf("alice's checkpoint after the flood: %v %s", st.State, st.Error)
		}
	})

	t.Run("CompleteOnMissingFillsNothing", func(t *testing.T) {
		// (b) bob's Complete on 100 missing checkpoints (more than max-checkpoints, 64) created
		// entries that never resolved: the mirror stopped for everyone.
		for i := 0; i < 100; i++ {
			_, err := env.client.Complete(ctx, &pb.MirrorCompleteRequest{User: "bob", Ref: &pb.CheckpointRef{Rule: "sig", Job: "nothere", Step: int64(i)}})
			if status.Code(err) != codes.NotFound {
				t.Fatalf("Complete %d on a missing checkpoint: %v", i, err)
			}
		}
		st, err := env.client.Status(ctx, &pb.MirrorStatusRequest{User: env.su, Job: "nothere"})
		if err != nil || len(st.Checkpoints) != 0 {
			t.Fatalf("status after bob's Completes: %d checkpoints (%v)", len(st.GetCheckpoints()), err)
		}
		// bob cannot complete alice's signal checkpoint either.
		if err := alice.MkdirAll("/sig/alicesig/step_1", 0o755); err != nil {
			t.Fatal(err)
		}
		mirrorWrite(t, alice, "/sig/alicesig/step_1/model.pt", randBytes(10_000))
		_, err = env.client.Complete(ctx, &pb.MirrorCompleteRequest{User: "bob", Ref: &pb.CheckpointRef{Rule: "sig", Job: "alicesig", Step: 1}})
		if status.Code(err) != codes.PermissionDenied {
			t.Fatalf("bob completes alice's checkpoint: %v", err)
		}
		if _, err := env.client.Complete(ctx, &pb.MirrorCompleteRequest{User: "alice", Ref: &pb.CheckpointRef{Rule: "sig", Job: "alicesig", Step: 1}}); err != nil {
			t.Fatal(err)
		}
		if st := env.wait(t, "alice", "sig", "alicesig", 1, 2*time.Minute); st.State != pb.CheckpointStatus_COMMITTED {
			t.Fatalf("alice's signal checkpoint: %v %s", st.State, st.Error)
		}
		ckpt(t, alice, "/ckpt/aftercomplete/step_1")
		if st := env.wait(t, "alice", "ck", "aftercomplete", 1, 2*time.Minute); st.State != pb.CheckpointStatus_COMMITTED {
			t.Fatalf("alice's checkpoint after bob's Completes: %v %s", st.State, st.Error)
		}
	})
}

// writeRep1 writes a one-block file with replication 1.
func writeRep1(t *testing.T, c *hdfs.Client, name string) {
	t.Helper()
	w, err := c.CreateFile(name, 1, blockSize, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(randomBytes(t, 64<<10)); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := hdfsio.CloseFile(cctx, w); err != nil {
		t.Fatal(err)
	}
}

func TestHostileNNHotspot(t *testing.T) {
	a := artifacts(t)
	c, lay := startCluster(t, a, extcluster.Options{Name: "hostile-hot", DataNodes: 3,
		NameNodeSite: map[string]string{
			"newtricks.hotspot.poll-interval":             "300ms",
			"newtricks.hotspot.max-active-hints.per-user": "2",
			"newtricks.ext.restart.backoff.max.ms":        "1000",
			"hadoop.user.group.static.mapping.overrides":  "alice=alice;bob=bob;",
			"dfs.namenode.fs-limits.min-block-size":       "0",
			"newtricks.hotspot.state.max-xattr-bytes":     "16384",
		}})
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	su, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	root, err := c.Client(su.Username)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, d := range []struct{ dir, owner string }{{"/ha", "alice"}, {"/hb", "bob"}} {
		if err := root.MkdirAll(d.dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := root.Chown(d.dir, d.owner, d.owner); err != nil {
			t.Fatal(err)
		}
	}
	aliceFS, err := c.Client("alice")
	if err != nil {
		t.Fatal(err)
	}
	defer aliceFS.Close()
	bobFS, err := c.Client("bob")
	if err != nil {
		t.Fatal(err)
	}
	defer bobFS.Close()
	for _, f := range []string{"/ha/1", "/ha/2", "/ha/3", "/ha/forged"} {
		writeRep1(t, aliceFS, f)
	}
	for _, f := range []string{"/hb/1", "/hb/2", "/hb/3"} {
		writeRep1(t, bobFS, f)
	}
	alice, err := hintclient.Dial(lay.NameNodeAPI, "alice")
	if err != nil {
		t.Fatal(err)
	}
	defer alice.Close()
	bob, err := hintclient.Dial(lay.NameNodeAPI, "bob")
	if err != nil {
		t.Fatal(err)
	}
	defer bob.Close()
	hint := func(c *hintclient.Client, p string, d time.Duration, dry bool) (*hotspot.Plan, error) {
		return createHint(t, ctx, c, hintclient.Hint{Paths: []string{p}, For: d, Readers: 8, DryRun: dry})
	}
	factor := func(p string) int {
		r, err := replication(root, p)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}

	t.Run("PerUserHintQuota", func(t *testing.T) {
		// (e) global caps only (finding 8): one user could take all 16 hints. alice at her
		// cap (2) is refused, a dry run too; bob still hints.
		var ids []string
		for _, p := range []string{"/ha/1", "/ha/2"} {
			plan, err := hint(alice, p, time.Minute, false)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, plan.HintID)
		}
		for _, dry := range []bool{false, true} {
			if _, err := hint(alice, "/ha/3", time.Minute, dry); !errors.Is(err, hotspot.ErrTooManyHints) || !strings.Contains(err.Error(), "per-user") {
				t.Fatalf("alice's third hint (dry run %v): %v", dry, err)
			}
		}
		plan, err := hint(bob, "/hb/1", time.Minute, false)
		if err != nil {
			t.Fatalf("bob while alice is at her cap: %v", err)
		}
		for _, id := range ids {
			if _, err := alice.Done(ctx, id); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := bob.Done(ctx, plan.HintID); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("ForgedMarkerSkipped", func(t *testing.T) {
		// (d) alice rewrites the marker of her hinted file; after a restart recovery looped
		// for ever ("replication 40000"), nobody could hint, every raised file stayed raised.
		pa, err := hint(alice, "/ha/forged", 40*time.Second, false)
		if err != nil {
			t.Fatal(err)
		}
		pb1, err := hint(bob, "/hb/2", 40*time.Second, false)
		if err != nil {
			t.Fatal(err)
		}
		if factor("/ha/forged") != 3 || factor("/hb/2") != 3 {
			t.Fatalf("not raised: %d %d", factor("/ha/forged"), factor("/hb/2"))
		}
		forged := fmt.Sprintf(`{"o":40000,"a":3,"h":{%q:3}}`, pa.HintID)
		if err := aliceFS.SetXAttr("/ha/forged", "user.newtricks.hotspot", forged); err != nil {
			t.Fatalf("alice rewrites her marker: %v", err)
		}
		pids, err := c.KillChildren(cluster.NameNode, "namenode-ext")
		if err != nil || len(pids) == 0 {
			t.Fatalf("kill namenode-ext: %v %v", pids, err)
		}
		t.Logf("killed namenode-ext %v; the hook restarts it", pids)
		// bob can hint once namenode-ext is back (createHint retries UNAVAILABLE 90 s).
		plan, err := hint(bob, "/hb/3", time.Minute, false)
		if err != nil {
			t.Fatalf("bob's hint after the restart: %v", err)
		}
		if _, err := bob.Done(ctx, plan.HintID); err != nil {
			t.Fatal(err)
		}
		// bob's raised file is restored at its deadline; alice's is skipped (left as is).
		eventually(t, time.Until(pb1.Deadline)+30*time.Second, "bob's raised file restored", func() error {
			if r := factor("/hb/2"); r != 1 {
				return fmt.Errorf("factor %d", r)
			}
			return nil
		})
		time.Sleep(time.Until(pa.Deadline) + 2*time.Second)
		if r := factor("/ha/forged"); r != 3 {
			t.Fatalf("the forged file's factor was changed to %d", r)
		}
		admin, err := hintclient.Dial(lay.NameNodeAPI, su.Username)
		if err != nil {
			t.Fatal(err)
		}
		defer admin.Close()
		_, problems, err := admin.ListAll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(strings.Join(problems, "\n"), "/ha/forged") {
			t.Fatalf("problems %q", problems)
		}
		if v := nnMetric(t, lay, "newtricks_hotspot_markers_rejected_total"); v != "1" {
			t.Fatalf("markers rejected %q", v)
		}
	})
}

// nnMetric returns a sample of namenode-ext's /metrics ("" if absent).
func nnMetric(t *testing.T, lay extcluster.Layout, name string) string {
	t.Helper()
	resp, err := http.Get("http://" + lay.NameNodeMetrics + "/metrics")
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
