package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/colinmarc/hdfs/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/newtricks/newtricks/harness/cluster"
	"github.com/newtricks/newtricks/harness/extcluster"
	"github.com/newtricks/newtricks/internal/hdfsio"
	"github.com/newtricks/newtricks/namenode-ext/hotspot"
	"github.com/newtricks/newtricks/namenode-ext/hotspot/hintclient"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// nameNodeHost dials the NameNode hook's host service (its unix socket in the socket dir), as
// namenode-ext does.
func nameNodeHost(t *testing.T, lay extcluster.Layout) pb.NameNodeHostClient {
	t.Helper()
	socks, err := filepath.Glob(filepath.Join(lay.SocketDir, "nn-*.sock"))
	if err != nil || len(socks) == 0 {
		t.Fatalf("NameNode host socket in %s: %v %v", lay.SocketDir, socks, err)
	}
	// A NameNode killed by a restart case may have left its socket: take the newest.
	newest, at := "", time.Time{}
	for _, s := range socks {
		if fi, err := os.Stat(s); err == nil && fi.ModTime().After(at) {
			newest, at = s, fi.ModTime()
		}
	}
	conn, err := grpc.NewClient("unix://"+newest, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return pb.NewNameNodeHostClient(conn)
}

// replication returns the replication factor of name.
func replication(c *hdfs.Client, name string) (int, error) { return hdfsio.Replication(c, name) }

// blocksRead sums DataNodeActivity.BlocksRead per DataNode index.
func blocksRead(c *cluster.Cluster) (map[int]int64, error) {
	out := map[int]int64{}
	for _, dn := range c.DataNodes() {
		bean, err := jmx(dn.HTTPAddr, "Hadoop:service=DataNode,name=DataNodeActivity-*")
		if err != nil {
			return nil, fmt.Errorf("datanode %d: %w", dn.Index, err)
		}
		v, _ := bean["BlocksRead"].(float64)
		out[dn.Index] = int64(v)
	}
	return out, nil
}

// jmxCacheTTL is how long a metrics2 source's JMX view may lag (MetricsSourceAdapter
// refreshes it at most once per metrics period, 10 s by default).
const jmxCacheTTL = 11 * time.Second

// servingNodes reads name n times (each open asks the NameNode for locations again) and
// returns how many distinct DataNodes served blocks.
func servingNodes(t *testing.T, c *cluster.Cluster, cl *hdfs.Client, name string, n int) int {
	t.Helper()
	served := 0
	for _, v := range readsPerNode(t, c, cl, name, n) {
		if v > 0 {
			served++
		}
	}
	return served
}

// readsPerNode reads name n times and returns the blocks each DataNode served meanwhile.
func readsPerNode(t *testing.T, c *cluster.Cluster, cl *hdfs.Client, name string, n int) map[int]int64 {
	t.Helper()
	time.Sleep(jmxCacheTTL)
	before, err := blocksRead(c)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		f, err := cl.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, f); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	time.Sleep(jmxCacheTTL)
	after, err := blocksRead(c)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]int64{}
	for i, v := range after {
		out[i] = v - before[i]
	}
	return out
}

// farClient connects as user from 127.0.0.2, an address no DataNode has: on loopback a
// client at 127.0.0.1 is "local" to a random DataNode, which the NameNode sorts first.
func farClient(c *cluster.Cluster, user string) (*hdfs.Client, error) {
	opts := c.ClientOptions(user)
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}, Timeout: 10 * time.Second}
	opts.NamenodeDialFunc = d.DialContext
	return hdfs.NewClient(opts)
}

// setSpaceQuota runs Hadoop's own DFSAdmin as the superuser.
func setSpaceQuota(t *testing.T, c *cluster.Cluster, a extcluster.Artifacts, bytes int64, dir string) {
	t.Helper()
	lib := a.HadoopLibDir
	if lib == "" {
		lib = cluster.DefaultHadoopLib()
	}
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"-XX:+IgnoreUnrecognizedVMOptions", "--add-opens=java.base/java.lang=ALL-UNNAMED",
		"-cp", c.DataNodes()[0].ConfDir + ":" + filepath.Join(lib, "*"),
		"org.apache.hadoop.hdfs.tools.DFSAdmin", "-setSpaceQuota", fmt.Sprint(bytes), dir}
	cmd := exec.Command("java", args...)
	cmd.Env = append(os.Environ(), "HADOOP_USER_NAME="+u.Username)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("dfsadmin -setSpaceQuota: %v\n%s", err, out)
	}
}

// setrep sets a factor with Hadoop's own FsShell as the superuser, as an admin would.
func setrep(t *testing.T, c *cluster.Cluster, a extcluster.Artifacts, factor int, name string) {
	t.Helper()
	lib := a.HadoopLibDir
	if lib == "" {
		lib = cluster.DefaultHadoopLib()
	}
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("java", "-XX:+IgnoreUnrecognizedVMOptions", "--add-opens=java.base/java.lang=ALL-UNNAMED",
		"-cp", c.DataNodes()[0].ConfDir+":"+filepath.Join(lib, "*"),
		"org.apache.hadoop.fs.FsShell", "-setrep", fmt.Sprint(factor), name)
	cmd.Env = append(os.Environ(), "HADOOP_USER_NAME="+u.Username)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hdfs dfs -setrep: %v\n%s", err, out)
	}
}

// nnConf reads one property of the running NameNode's configuration (its /conf servlet shows
// values changed by reconfiguration).
func nnConf(c *cluster.Cluster, key string) (string, error) {
	req, err := http.NewRequest(http.MethodGet, "http://"+c.NameNodeHTTPAddr()+"/conf?name="+key, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var body struct {
		Property struct {
			Value string `json:"value"`
		} `json:"property"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return "", fmt.Errorf("conf %s: %w", key, err)
	}
	return body.Property.Value, nil
}

// createHint retries while namenode-ext is (re)starting or recovering.
func createHint(t *testing.T, ctx context.Context, c *hintclient.Client, h hintclient.Hint) (*hotspot.Plan, error) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		plan, err := c.Create(ctx, h)
		if !errors.Is(err, hotspot.ErrUnavailable) || time.Now().After(deadline) {
			return plan, err
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// TestHotspot runs the hotspot cases of issue 4 on one real cluster of 6 DataNodes.
func TestHotspot(t *testing.T) {
	a := artifacts(t)
	c, lay := startCluster(t, a, extcluster.Options{Name: "hotspot", DataNodes: 6,
		NameNodeSite: map[string]string{
			"newtricks.hotspot.allowed-prefixes": "/hot,/q,/react",
			"newtricks.hotspot.poll-interval":    "300ms",
			// Reactive mode with K=3: on loopback every client is 127.0.0.1, so only distinct
			// users count as distinct clients, and the other cases read as alice alone.
			"newtricks.hotspot.reactive":          "true",
			"newtricks.hotspot.reactive.user":     "hotspot-svc",
			"newtricks.hotspot.reactive.clients":  "3",
			"newtricks.hotspot.reactive.window":   "20s",
			"newtricks.hotspot.reactive.duration": "15s",
			// Balanced reads for the hinted files (docs/hotspot.md).
			"dfs.net.topology.impl":      "io.newtricks.hadoop.BalancedReads$Topology",
			"dfs.namenode.audit.loggers": "default," + extcluster.AuditLoggerClass + ",io.newtricks.hadoop.BalancedReads$AuditHook",
		}})
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()

	su, err := user.Current() // the daemons' user: the HDFS superuser
	if err != nil {
		t.Fatal(err)
	}
	root, err := c.Client(su.Username)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	aliceFS, err := c.Client("alice")
	if err != nil {
		t.Fatal(err)
	}
	defer aliceFS.Close()
	for _, d := range []string{"/hot", "/q", "/react", "/other"} {
		if err := root.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := root.Chown(d, "alice", "alice"); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string][]byte{}
	for _, name := range []string{"/hot/meta", "/hot/emb-0", "/hot/emb-1", "/hot/one", "/react/x", "/react/y", "/q/f", "/other/x"} {
		size := 3 << 20
		if name == "/hot/one" || strings.HasPrefix(name, "/react/") || name == "/q/f" {
			size = 1 << 20 // one block
		}
		files[name] = randomBytes(t, size)
		if err := writeFile(aliceFS, name, files[name], 0o644); err != nil {
			t.Fatalf("write %s: %v", name, err)
		}
	}
	// Implicit hints act as newtricks.hotspot.reactive.user with its rights only: it may write
	// /react/y (mode 0666) but not /react/x (alice's, 0644).
	if err := aliceFS.Chmod("/react/y", 0o666); err != nil {
		t.Fatal(err)
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

	waitFactor := func(t *testing.T, name string, want int, within time.Duration) {
		t.Helper()
		eventually(t, within, fmt.Sprintf("%s back to factor %d", name, want), func() error {
			r, err := replication(root, name)
			if err != nil {
				return err
			}
			if r != want {
				return fmt.Errorf("factor %d", r)
			}
			return nil
		})
	}

	t.Run("hint raises factor, places replicas, spreads readers, restores", func(t *testing.T) {
		spreadBefore := servingNodes(t, c, aliceFS, "/hot/one", 24)
		start := time.Now()
		plan, err := createHint(t, ctx, alice, hintclient.Hint{Paths: []string{"/hot"}, In: 2 * time.Second,
			For: 45 * time.Second, Readers: 32})
		if err != nil {
			t.Fatal(err)
		}
		if len(plan.Files) != 4 {
			t.Fatalf("plan files %+v skipped %+v", plan.Files, plan.Skipped)
		}
		for _, f := range plan.Files {
			if f.Original != 3 || f.Target != 6 {
				t.Fatalf("plan %+v: want 3 -> 6 (capped at 6 live DataNodes)", f)
			}
			if r, err := replication(root, f.Path); err != nil || r != 6 {
				t.Fatalf("%s factor %d %v", f.Path, r, err)
			}
		}
		// The limits are raised while there is copying to do (read right after the hint,
		// before any replica could be scheduled: the redundancy interval is 1 s).
		for key, want := range map[string]string{"dfs.namenode.replication.max-streams": "32",
			"dfs.namenode.replication.max-streams-hard-limit":        "64",
			"dfs.namenode.replication.work.multiplier.per.iteration": "16"} {
			if v, err := nnConf(c, key); err != nil || v != want {
				t.Fatalf("%s=%q (%v) right after the hint, want %s", key, v, err, want)
			}
		}
		t.Logf("plan: %d bytes to copy, estimated ready in %v, notes %q", plan.BytesToCopy,
			plan.EstimatedReady.Sub(start).Round(time.Second), plan.Notes)
		xa, err := root.GetXAttrs("/hot/meta", "user.newtricks.hotspot")
		if err != nil || !strings.Contains(xa["user.newtricks.hotspot"], `"o":3`) {
			t.Fatalf("marker xattr: %v %v", xa, err)
		}
		wctx, wcancel := context.WithTimeout(ctx, 60*time.Second)
		st, err := alice.WaitReady(wctx, plan.HintID, 200*time.Millisecond)
		wcancel()
		if err != nil {
			t.Fatalf("not ready: %v (%+v)", err, st)
		}
		readyIn := st.ReadyAt.Sub(st.Created)
		t.Logf("ready after %v", readyIn.Round(10*time.Millisecond))
		for _, f := range st.Files {
			if f.Placed < 6 {
				t.Fatalf("status %+v", f)
			}
		}
		eventually(t, 10*time.Second, "replication limits restored once ready", func() error {
			for key, want := range map[string]string{"dfs.namenode.replication.max-streams": "2",
				"dfs.namenode.replication.max-streams-hard-limit":        "4",
				"dfs.namenode.replication.work.multiplier.per.iteration": "2"} {
				if v, err := nnConf(c, key); err != nil || v != want {
					return fmt.Errorf("%s=%q (%v), want %s", key, v, err, want)
				}
			}
			return nil
		})
		spreadAfter := servingNodes(t, c, aliceFS, "/hot/one", 24)
		t.Logf("DataNodes serving one hot block: %d before the hint, %d after", spreadBefore, spreadAfter)
		if spreadBefore > 3 || spreadAfter <= 3 {
			t.Fatalf("readers not spread: %d before, %d after", spreadBefore, spreadAfter)
		}
		// Balanced reads: 24 plain-client opens of the hinted one-block file from a host with no
		// DataNode are rotated over its 6 replicas, 4 each (a shuffle gives 4 on average with
		// a busiest node near 7).
		far, err := farClient(c, "alice")
		if err != nil {
			t.Fatal(err)
		}
		defer far.Close()
		per := readsPerNode(t, c, far, "/hot/one", 24)
		t.Logf("blocks served per DataNode, 24 reads with balanced reads: %v", per)
		for i, v := range per {
			if v != 4 {
				t.Fatalf("DataNode %d served %d of 24 reads, want 4 each: %v", i, v, per)
			}
		}
		for name, want := range files {
			if strings.HasPrefix(name, "/hot/") {
				got, err := aliceFS.ReadFile(name)
				if err != nil || string(got) != string(want) {
					t.Fatalf("read %s while hinted: %v", name, err)
				}
			}
		}
		// After the window: original factor, excess replicas removed, no state left.
		waitFactor(t, "/hot/meta", 3, time.Until(plan.Deadline)+20*time.Second)
		for _, f := range plan.Files {
			waitFactor(t, f.Path, 3, 10*time.Second)
		}
		eventually(t, 60*time.Second, "replica counts converge to 3", func() error {
			return replicasAtMost(ctx, lay, "/hot/one", 3)
		})
		if xa, _ := root.ListXAttrs("/hot/meta"); len(xa) != 0 {
			t.Fatalf("marker left: %v", xa)
		}
		eventually(t, 10*time.Second, "hint record removed", func() error {
			if xa, _ := root.ListXAttrs("/"); len(xa) != 0 {
				return fmt.Errorf("registry left on /: %d xattrs", len(xa))
			}
			return nil
		})
	})

	t.Run("co-process killed mid-hint: restore still happens", func(t *testing.T) {
		plan, err := createHint(t, ctx, alice, hintclient.Hint{Paths: []string{"/hot/meta"}, For: 20 * time.Second, Readers: 32})
		if err != nil {
			t.Fatal(err)
		}
		if r, err := replication(root, "/hot/meta"); err != nil || r != 6 {
			t.Fatalf("factor %d (%v) before the kill, want 6", r, err)
		}
		pids, err := c.KillChildren(cluster.NameNode, "namenode-ext")
		if err != nil || len(pids) == 0 {
			t.Fatalf("kill namenode-ext: %v %v", pids, err)
		}
		t.Logf("killed namenode-ext %v", pids)
		waitFactor(t, "/hot/meta", 3, time.Until(plan.Deadline)+30*time.Second)
		eventually(t, 10*time.Second, "hint finished by the restarted namenode-ext", func() error {
			st, err := alice.Status(ctx, plan.HintID)
			if err != nil {
				return err
			}
			if st.State != hotspot.StateFinished {
				return fmt.Errorf("state %s", st.State)
			}
			return nil
		})
	})

	t.Run("NameNode restarted mid-hint: restore still happens", func(t *testing.T) {
		plan, err := createHint(t, ctx, alice, hintclient.Hint{Paths: []string{"/hot/emb-0"}, For: 20 * time.Second, Readers: 32})
		if err != nil {
			t.Fatal(err)
		}
		if r, err := replication(root, "/hot/emb-0"); err != nil || r != 6 {
			t.Fatalf("factor %d (%v) before the restart, want 6", r, err)
		}
		if err := c.RestartNameNode(ctx); err != nil {
			t.Fatal(err)
		}
		fs, err := c.Client(su.Username)
		if err != nil {
			t.Fatal(err)
		}
		defer fs.Close()
		eventually(t, time.Until(plan.Deadline)+60*time.Second, "factor restored after NameNode restart", func() error {
			r, err := replication(fs, "/hot/emb-0")
			if err != nil {
				return err
			}
			if r != 3 {
				return fmt.Errorf("factor %d", r)
			}
			return nil
		})
		// The record goes last, after every file of the hint.
		eventually(t, 10*time.Second, "hint record removed", func() error {
			if xa, _ := fs.ListXAttrs("/"); len(xa) != 0 {
				return fmt.Errorf("registry left on /: %d xattrs", len(xa))
			}
			return nil
		})
	})

	// root may be stale after the NameNode restart; every case below uses a fresh client.
	fs, err := c.Client(su.Username)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	factorNow := func(t *testing.T, name string, want int) {
		t.Helper()
		if r, err := replication(fs, name); err != nil || r != want {
			t.Fatalf("%s factor %d (%v), want %d", name, r, err, want)
		}
	}
	waitFactorFS := func(t *testing.T, name string, want int, within time.Duration) {
		t.Helper()
		eventually(t, within, fmt.Sprintf("%s at factor %d", name, want), func() error {
			r, err := replication(fs, name)
			if err != nil {
				return err
			}
			if r != want {
				return fmt.Errorf("factor %d", r)
			}
			return nil
		})
	}
	aliceNow, err := c.Client("alice")
	if err != nil {
		t.Fatal(err)
	}
	defer aliceNow.Close()

	t.Run("renamed during the window: restored by inode id", func(t *testing.T) {
		plan, err := createHint(t, ctx, alice, hintclient.Hint{Paths: []string{"/hot/emb-1"}, For: time.Hour, Readers: 32})
		if err != nil {
			t.Fatal(err)
		}
		factorNow(t, "/hot/emb-1", 6)
		if err := aliceNow.Rename("/hot/emb-1", "/hot/emb-1.moved"); err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, "status follows the rename", func() error {
			st, err := alice.Status(ctx, plan.HintID)
			if err != nil {
				return err
			}
			if st.Files[0].Path != "/hot/emb-1.moved" {
				return fmt.Errorf("path %s", st.Files[0].Path)
			}
			return nil
		})
		if _, err := alice.Done(ctx, plan.HintID); err != nil {
			t.Fatal(err)
		}
		factorNow(t, "/hot/emb-1.moved", 3)
		if xa, _ := fs.ListXAttrs("/hot/emb-1.moved"); len(xa) != 0 {
			t.Fatalf("marker left: %v", xa)
		}
		if err := aliceNow.Rename("/hot/emb-1.moved", "/hot/emb-1"); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("overlapping hints, a restart between the restores", func(t *testing.T) {
		small, err := createHint(t, ctx, alice, hintclient.Hint{Paths: []string{"/hot/meta"}, For: time.Hour, Readers: 8}) // 4
		if err != nil {
			t.Fatal(err)
		}
		big, err := createHint(t, ctx, alice, hintclient.Hint{Paths: []string{"/hot/meta"}, For: time.Hour, Readers: 32}) // 6
		if err != nil {
			t.Fatal(err)
		}
		factorNow(t, "/hot/meta", 6)
		if _, err := alice.Done(ctx, big.HintID); err != nil {
			t.Fatal(err)
		}
		factorNow(t, "/hot/meta", 4)
		if _, err := c.KillChildren(cluster.NameNode, "namenode-ext"); err != nil {
			t.Fatal(err)
		}
		eventually(t, 60*time.Second, "small hint adopted by the restarted namenode-ext", func() error {
			_, err := alice.Done(ctx, small.HintID)
			return err
		})
		factorNow(t, "/hot/meta", 3)
	})

	t.Run("a factor set by someone else is never overwritten", func(t *testing.T) {
		a1, err := createHint(t, ctx, alice, hintclient.Hint{Paths: []string{"/hot/emb-0"}, For: time.Hour, Readers: 8})
		if err != nil {
			t.Fatal(err)
		}
		a2, err := createHint(t, ctx, alice, hintclient.Hint{Paths: []string{"/hot/emb-0"}, For: time.Hour, Readers: 32})
		if err != nil {
			t.Fatal(err)
		}
		factorNow(t, "/hot/emb-0", 6)
		setrep(t, c, a, 5, "/hot/emb-0") // the admin, with Hadoop's own FsShell
		st, err := alice.Done(ctx, a1.HintID)
		if err != nil {
			t.Fatal(err)
		}
		if st.Files[0].Result != hotspot.ResultExternal {
			t.Fatalf("result %+v", st.Files[0])
		}
		if _, err := c.KillChildren(cluster.NameNode, "namenode-ext"); err != nil {
			t.Fatal(err)
		}
		eventually(t, 60*time.Second, "second hint ended by the restarted namenode-ext", func() error {
			_, err := alice.Done(ctx, a2.HintID)
			return err
		})
		factorNow(t, "/hot/emb-0", 5)
		if xa, _ := fs.ListXAttrs("/hot/emb-0"); len(xa) != 0 {
			t.Fatalf("marker left: %v", xa)
		}
		setrep(t, c, a, 3, "/hot/emb-0")
	})

	t.Run("an admin's setrep racing a conditional change is never overwritten", func(t *testing.T) {
		// The check of a conditional change (factor == expect) and the change itself run
		// under one hold of the NameNode's write lock: racing an admin's setReplication (the
		// NameNode's own code path, as FsShell's), either the admin's lands first and the
		// change is refused (ABORTED), or the change lands first and the admin's overwrites
		// it. Either way the admin's 5 stays. Checked separately, the old check-then-set
		// (separate operations) ended at 6 in some rounds.
		const name = "/other/cas"
		if err := writeFile(aliceFS, name, randomBytes(t, 1<<10), 0o644); err != nil {
			t.Fatal(err)
		}
		host := nameNodeHost(t, lay)
		st, err := root.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		id := st.Sys().(interface{ GetFileId() uint64 }).GetFileId()
		inode := fmt.Sprintf("/.reserved/.inodes/%d", id)
		const xattr = "user.newtricks.test.cas"
		outcomes := map[string]int{}
		for round := 0; round < 60; round++ {
			if _, err := host.SetReplication(ctx, &pb.SetReplicationRequest{Path: name, Replication: 3, User: su.Username}); err != nil {
				t.Fatal(err)
			}
			change := make(chan *pb.ReplicationResult, 1)
			admin := make(chan error, 1)
			gate := make(chan struct{})
			go func() {
				<-gate
				resp, err := host.SetReplications(ctx, &pb.SetReplicationsRequest{User: su.Username, Changes: []*pb.ReplicationChange{{
					Path: inode, Expect: 3, Replication: 6, SetXattr: xattr,
					XattrValue: []byte("inflight"), FinalXattrValue: []byte("settled")}}})
				if err != nil || len(resp.GetResults()) != 1 {
					t.Errorf("SetReplications: %v %v", resp, err)
					change <- nil
					return
				}
				change <- resp.GetResults()[0]
			}()
			go func() {
				<-gate
				_, err := host.SetReplication(ctx, &pb.SetReplicationRequest{Path: name, Replication: 5, User: su.Username})
				admin <- err
			}()
			close(gate)
			r, aerr := <-change, <-admin
			if aerr != nil || r == nil {
				t.Fatalf("round %d: admin %v, change %v", round, aerr, r)
			}
			got, err := replication(root, name)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case r.GetCode() == 0:
				outcomes["change first"]++
			case codes.Code(r.GetCode()) == codes.Aborted:
				outcomes["admin first (ABORTED)"]++
			default:
				t.Fatalf("round %d: change failed: %d %s", round, r.GetCode(), r.GetMessage())
			}
			if got != 5 {
				t.Fatalf("round %d: factor %d after the admin's setrep 5 raced a change 3 -> 6 (result %d %s; so far %v)",
					round, got, r.GetCode(), r.GetMessage(), outcomes)
			}
		}
		t.Logf("60 races, every one ended at the admin's 5: %v", outcomes)
		if log, err := os.ReadFile(c.LogPath(cluster.NameNode)); err != nil || strings.Contains(string(log), "cannot run under one NameNode lock") {
			t.Fatalf("the NameNode fell back to separate operations (log read: %v)", err)
		}
	})

	t.Run("extend keeps the factor past the first deadline", func(t *testing.T) {
		plan, err := createHint(t, ctx, alice, hintclient.Hint{Paths: []string{"/hot/one"}, For: 8 * time.Second, Readers: 32})
		if err != nil {
			t.Fatal(err)
		}
		st, err := alice.Extend(ctx, plan.HintID, 15*time.Second)
		if err != nil || !st.Deadline.After(plan.Deadline.Add(14*time.Second)) {
			t.Fatalf("extend: %+v %v", st, err)
		}
		time.Sleep(time.Until(plan.Deadline) + 3*time.Second)
		factorNow(t, "/hot/one", 6)
		waitFactorFS(t, "/hot/one", 3, time.Until(st.Deadline)+15*time.Second)
	})

	t.Run("permission, prefixes, bad input", func(t *testing.T) {
		_, err := createHint(t, ctx, bob, hintclient.Hint{Paths: []string{"/hot/meta"}, For: time.Minute, Readers: 8})
		if !errors.Is(err, hotspot.ErrPermission) {
			t.Fatalf("bob on alice's file: %v", err)
		}
		_, err = createHint(t, ctx, alice, hintclient.Hint{Paths: []string{"/other/x"}, For: time.Minute, Readers: 8})
		if !errors.Is(err, hotspot.ErrPermission) || !strings.Contains(err.Error(), "allowed prefix") {
			t.Fatalf("outside prefixes: %v", err)
		}
		_, err = createHint(t, ctx, alice, hintclient.Hint{Paths: []string{"/hot/nope"}, For: time.Minute, Readers: 8})
		if !errors.Is(err, hotspot.ErrNotFound) {
			t.Fatalf("unknown path: %v", err)
		}
		_, err = createHint(t, ctx, alice, hintclient.Hint{Paths: []string{"/hot"}, For: -time.Minute, Readers: 8})
		if !errors.Is(err, hotspot.ErrInvalid) {
			t.Fatalf("negative duration: %v", err)
		}
		plan, err := createHint(t, ctx, alice, hintclient.Hint{Paths: []string{"/hot/meta"}, For: time.Minute, Readers: 8,
			Replication: 100, DryRun: true})
		if err != nil || plan.Files[0].Target != 6 || !plan.Partial {
			t.Fatalf("target above cluster size: %+v %v", plan, err)
		}
		if r, _ := replication(root, "/hot/meta"); r != 3 {
			t.Fatalf("bad input changed a factor: %d", r)
		}
		// The CLI, against the same service.
		if _, err := os.Stat(a.NewtricksCLI); err == nil {
			out, err := exec.Command(a.NewtricksCLI, "hint", "create", "--addr", lay.NameNodeAPI, "--user", "alice",
				"--paths", "/hot/meta,/other/x", "--for", "1m", "--readers", "64", "--dry-run").CombinedOutput()
			if err != nil || !strings.Contains(string(out), "3 -> 6") || !strings.Contains(string(out), "OUTSIDE_PREFIXES") {
				t.Fatalf("newtricks hint create --dry-run: %v\n%s", err, out)
			}
			t.Logf("newtricks hint create --dry-run:\n%s", out)
			out, err = exec.Command(a.NewtricksCLI, "hint", "status", "--addr", lay.NameNodeAPI, "--user", "alice", "nope").CombinedOutput()
			if err == nil || !strings.Contains(string(out), "not found") {
				t.Fatalf("newtricks hint status of an unknown id: %v\n%s", err, out)
			}
		}
	})

	// hookCounters reads the NameNode hook's audit counters, fresh: metrics2 serves JMX from a
	// cache it refreshes on a read at least 10 s after the last refresh, so it reads after 11 s
	// without reads (which also lets the forwarder deliver what was queued before).
	hookCounters := func(t *testing.T) map[string]float64 {
		t.Helper()
		time.Sleep(11 * time.Second)
		b, err := jmx(c.NameNodeHTTPAddr(), nnHookBean)
		if err != nil {
			t.Fatal(err)
		}
		cur := map[string]float64{}
		for _, k := range []string{"AuditEventsForwarded", "AuditQueued", "AuditQueueSize", "AuditHeld",
			"AuditHoldReleased", "AuditHoldExpired", "AuditHoldOverflow", "AuditHoldEntries"} {
			v, ok := b[k].(float64)
			if !ok {
				t.Fatalf("%s missing from %s: %v", k, nnHookBean, b)
			}
			cur[k] = v
		}
		if cur["AuditQueueSize"] != 0 {
			t.Fatalf("hook's audit queue not drained: %v", cur)
		}
		return cur
	}

	// The reactive subscription holds each (open, file) in the hook until it was opened K
	// times within W: files opened once cost the co-process nothing.
	var beforeReactive map[string]float64
	t.Run("reactive: files opened once are held in the hook, not forwarded", func(t *testing.T) {
		const n = 12
		for i := 0; i < n; i++ {
			if err := writeFile(aliceFS, fmt.Sprintf("/react/once-%d", i), randomBytes(t, 1<<10), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		before := hookCounters(t)
		for i := 0; i < n; i++ {
			if _, err := aliceFS.ReadFile(fmt.Sprintf("/react/once-%d", i)); err != nil {
				t.Fatal(err)
			}
		}
		after := hookCounters(t)
		t.Logf("hook counters before %v, after %v", before, after)
		if held := after["AuditHeld"] - before["AuditHeld"]; held < n {
			t.Errorf("AuditHeld grew by %v for %d files opened once, want >= %d", held, n, n)
		}
		if fwd := after["AuditEventsForwarded"] - before["AuditEventsForwarded"]; fwd != 0 {
			t.Errorf("AuditEventsForwarded grew by %v: opens of files opened once were forwarded", fwd)
		}
		if after["AuditHoldEntries"] < n {
			t.Errorf("AuditHoldEntries = %v, want >= %d", after["AuditHoldEntries"], n)
		}
		if after["AuditHoldOverflow"] != before["AuditHoldOverflow"] {
			t.Errorf("AuditHoldOverflow grew: %v -> %v", before["AuditHoldOverflow"], after["AuditHoldOverflow"])
		}
		beforeReactive = after
	})

	t.Run("reactive: K distinct clients opening a file make an implicit hint, as the service user", func(t *testing.T) {
		for _, u := range []string{"r1", "r2", "r3"} {
			fs, err := c.Client(u)
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"/react/x", "/react/y"} {
				if _, err := fs.ReadFile(name); err != nil {
					t.Fatal(err)
				}
			}
			fs.Close()
		}
		// 4·K = 12 readers: factor 6, capped at the 6 live DataNodes; only for the file the
		// service user may write.
		waitFactor(t, "/react/y", 6, 20*time.Second)
		l, err := e2List(ctx, lay, su.Username)
		if err != nil || len(l) != 1 || !l[0].Implicit || l[0].User != "hotspot-svc" {
			t.Fatalf("implicit hints listed for the superuser: %+v %v (want one, of hotspot-svc)", l, err)
		}
		if len(l[0].Files) != 1 || l[0].Files[0].Path != "/react/y" {
			t.Fatalf("implicit hint files %+v, want /react/y only", l[0].Files)
		}
		// The first K-1 opens of each file were held in the hook and forwarded with the K-th.
		if beforeReactive != nil {
			after := hookCounters(t)
			if rel := after["AuditHoldReleased"] - beforeReactive["AuditHoldReleased"]; rel < 2*(3-1) {
				t.Errorf("AuditHoldReleased grew by %v, want >= %d (K-1 held opens of /react/x and /react/y)", rel, 2*(3-1))
			}
		}
		if r, err := replication(root, "/react/x"); err != nil || r != 3 {
			t.Fatalf("/react/x (not writable by hotspot-svc) has factor %d (%v), want 3", r, err)
		}
		waitFactor(t, "/react/y", 3, 40*time.Second)
		if r, err := replication(root, "/react/x"); err != nil || r != 3 {
			t.Fatalf("/react/x factor %d (%v), want 3", r, err)
		}
	})

	t.Run("space quota lowers the target", func(t *testing.T) {
		// /q/f is one 1 MiB block at factor 3 (3 MiB used); 4.5 MiB leaves room for one replica.
		setSpaceQuota(t, c, a, 9<<19, "/q")
		plan, err := createHint(t, ctx, alice, hintclient.Hint{Paths: []string{"/q"}, For: 10 * time.Second, Readers: 32})
		if err != nil {
			t.Fatal(err)
		}
		if len(plan.Files) != 1 || plan.Files[0].Target != 4 || !strings.Contains(plan.Files[0].Note, "quota") {
			t.Fatalf("quota plan %+v", plan.Files)
		}
		if r, _ := replication(root, "/q/f"); r != 4 {
			t.Fatalf("factor %d, want 4", r)
		}
		if _, err := alice.Done(ctx, plan.HintID); err != nil {
			t.Fatal(err)
		}
		waitFactor(t, "/q/f", 3, 10*time.Second)
	})
}

// replicasAtMost checks through namenode-ext's Locate that every block of name has at most n
// replicas.
func replicasAtMost(ctx context.Context, lay extcluster.Layout, name string, n int) error {
	ns, conn, err := extcluster.NamespaceClient(lay)
	if err != nil {
		return err
	}
	defer conn.Close()
	lb, err := ns.Locate(ctx, &pb.LocateRequest{Path: name, User: "alice"})
	if err != nil {
		return err
	}
	for _, b := range lb.GetBlocks() {
		if len(b.GetLocations()) > n {
			return fmt.Errorf("block %d has %d replicas", b.GetBlockId(), len(b.GetLocations()))
		}
	}
	return nil
}

// e2List lists active hints as user.
func e2List(ctx context.Context, lay extcluster.Layout, user string) ([]*hotspot.HintStatus, error) {
	c, err := hintclient.Dial(lay.NameNodeAPI, user)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.List(ctx)
}
