package cluster_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/user"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/colinmarc/hdfs/v2"

	"github.com/newtricks/newtricks/harness/cluster"
	"github.com/newtricks/newtricks/harness/clustertest"
	"github.com/newtricks/newtricks/internal/hdfsio"
)

// These tests start real JVMs; they run only with NEWTRICKS_CLUSTER_TESTS=1 (see clustertest).

func writeFile(t *testing.T, cl *hdfs.Client, name string, data []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := hdfsio.WriteFile(ctx, cl, name, data); err != nil {
		t.Fatalf("write %s: %v", name, err)
	}
}

func readEqual(t *testing.T, cl *hdfs.Client, name string, want []byte) {
	t.Helper()
	got, err := cl.ReadFile(name)
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("read %s: %d bytes differ from the %d written", name, len(got), len(want))
	}
}

func payload(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i>>8)
	}
	return b
}

// TestCluster is the life of one cluster: start 1 NameNode + 3 DataNodes, write and read
// with the Go client, kill and restart a DataNode, restart the NameNode, stop, and prove no
// process of it is left.
func TestCluster(t *testing.T) {
	extraJar := filepath.Join(t.TempDir(), "extra.jar") // a classpath entry need not exist
	cfg := cluster.Config{
		Name:           "dc-a",
		DataNodes:      3,
		HDFSSite:       map[string]string{"dfs.blocksize": "1048576"},
		DataNodeSite:   func(i int) map[string]string { return map[string]string{"dfs.datanode.handler.count": "3"} },
		ExtraClasspath: []string{extraJar},
	}
	c := clustertest.Start(t, cfg)
	t.Logf("STARTUP %s: 1 NameNode + 3 DataNodes ready in %v", c.Name(), c.StartupTime().Round(time.Millisecond))
	if c.StartupTime() > 60*time.Second {
		// Not an error: the machine is shared, and a loaded moment is not a regression.
		t.Logf("SLOW: startup took %v, target < 60s (load average %s)", c.StartupTime(), loadAvg())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	st, err := c.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.SafeMode != "" || st.NumLiveDataNodes != 3 || len(st.LiveNodes) != 3 {
		t.Fatalf("status after start: %+v", st)
	}

	cl, err := c.Client("alice")
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	root, err := c.Client(currentUser(t))
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	// The superuser (the user running the daemons) makes a home for alice.
	if err := root.MkdirAll("/user/alice", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := root.Chown("/user/alice", "alice", "alice"); err != nil {
		t.Fatal(err)
	}
	data := payload(3<<20 + 12345) // 4 blocks of 1 MiB (dfs.blocksize override)
	writeFile(t, cl, "/user/alice/f", data)
	readEqual(t, cl, "/user/alice/f", data)
	if err := cl.MkdirAll("/forbidden", 0o755); !errors.Is(err, os.ErrPermission) {
		t.Errorf("alice mkdir /: got %v, want permission denied (dfs.permissions.enabled)", err)
	}

	// Kill a DataNode: reads still work from the other replicas; restart it on the same
	// ports and dirs and it is live again.
	dn := c.DataNodes()[1]
	if !dn.Running || dn.PID == 0 {
		t.Fatalf("datanode 1: %+v", dn)
	}
	if err := c.KillDataNode(1); err != nil {
		t.Fatal(err)
	}
	if c.DataNodes()[1].Running || c.Running(cluster.DataNode(1)) {
		t.Fatal("datanode 1 still running after KillDataNode")
	}
	readEqual(t, cl, "/user/alice/f", data)
	began := time.Now()
	if err := c.StartDataNode(ctx, 1); err != nil {
		t.Fatal(err)
	}
	t.Logf("datanode 1 restarted and live in %v", time.Since(began).Round(time.Millisecond))
	if got := c.DataNodes()[1]; got.XferAddr != dn.XferAddr || got.PID == dn.PID || !got.Running {
		t.Errorf("restarted datanode 1: %+v (was %+v)", got, dn)
	}
	if err := c.WaitLive(ctx, 3); err != nil {
		t.Fatal(err)
	}

	// Restart the NameNode: the namespace survives, DataNodes re-register.
	began = time.Now()
	if err := c.RestartNameNode(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("namenode restarted and ready with 3 live datanodes in %v", time.Since(began).Round(time.Millisecond))
	cl2, err := c.Client("alice")
	if err != nil {
		t.Fatal(err)
	}
	defer cl2.Close()
	readEqual(t, cl2, "/user/alice/f", data)

	// Children of a daemon: a JVM without hooks has none.
	if kids, err := c.Children(cluster.NameNode, ""); err != nil || len(kids) != 0 {
		t.Errorf("namenode children: %v %v", kids, err)
	}

	// Stop leaves nothing behind, and is idempotent.
	base := c.BaseDir()
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if left := cluster.ProcessesMentioning(base + "/"); len(left) > 0 {
		t.Fatalf("processes of %s left after Stop: %v", base, left)
	}
}

// TestTwoClusters runs dc-a and dc-b at once, each with its own file system.
func TestTwoClusters(t *testing.T) {
	clustertest.Skip(t, cluster.Config{})
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		both = map[string]*cluster.Cluster{}
	)
	// Start both concurrently, as a demo would; each gets one DataNode to spare the CPU.
	for _, name := range []string{"dc-a", "dc-b"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := cluster.Start(context.Background(), cluster.Config{Name: name, DataNodes: 1, BaseDir: filepath.Join(t.TempDir(), name)})
			if err != nil {
				t.Errorf("start %s: %v", name, err)
				return
			}
			t.Cleanup(func() {
				if t.Failed() {
					var b bytes.Buffer
					c.DumpLogs(&b, 40)
					t.Log(b.String())
				}
				c.Stop()
			})
			t.Logf("%s up in %v at %s", name, c.StartupTime().Round(time.Millisecond), c.NameNodeAddr())
			mu.Lock()
			both[name] = c
			mu.Unlock()
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	a, b := both["dc-a"], both["dc-b"]
	if a.NameNodeAddr() == b.NameNodeAddr() {
		t.Fatal("both clusters share a NameNode address")
	}
	user := currentUser(t)
	ca, err := a.Client(user)
	if err != nil {
		t.Fatal(err)
	}
	defer ca.Close()
	cb, err := b.Client(user)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close()
	writeFile(t, ca, "/only-in-a", []byte("a"))
	writeFile(t, cb, "/only-in-b", []byte("b"))
	if _, err := cb.Stat("/only-in-a"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("dc-b sees dc-a's file: %v", err)
	}
	if _, err := ca.Stat("/only-in-b"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("dc-a sees dc-b's file: %v", err)
	}
	// Stopping one leaves the other serving.
	if err := a.Stop(); err != nil {
		t.Fatal(err)
	}
	readEqual(t, cb, "/only-in-b", []byte("b"))
	if left := cluster.ProcessesMentioning(a.BaseDir() + "/"); len(left) > 0 {
		t.Fatalf("dc-a processes left: %v", left)
	}
}

// TestAttach starts a detached cluster, as `newtricks cluster up` does, and stops it through
// a second handle read from state.json.
func TestAttach(t *testing.T) {
	cfg := clustertest.Skip(t, cluster.Config{})
	cfg.Name, cfg.DataNodes, cfg.Detached = "dc-cli", 1, true
	cfg.BaseDir = filepath.Join(t.TempDir(), "dc-cli")
	var steps []cluster.StartStep // the CLI's progress bar is drawn from these
	cfg.Progress = func(s cluster.StartStep) { steps = append(steps, s) }
	c, err := cluster.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop() })
	if len(steps) < 3 || steps[0].Phase != cluster.PhaseFormat || steps[1].Phase != cluster.PhaseLaunch {
		t.Fatalf("progress steps: %+v", steps)
	}
	if last := steps[len(steps)-1]; last.Phase != cluster.PhaseWait || !last.NameNodeUp || last.SafeMode != "" || last.Live != 1 || last.Want != 1 {
		t.Fatalf("last progress step %+v, want the ready state", last)
	}
	h, err := cluster.Attach(cfg.BaseDir)
	if err != nil {
		t.Fatal(err)
	}
	if h.NameNodeAddr() != c.NameNodeAddr() || h.NameNodePID() != c.NameNodePID() || len(h.DataNodes()) != 1 || !h.DataNodes()[0].Running {
		t.Fatalf("attached view differs: %s pid %d %+v", h.NameNodeAddr(), h.NameNodePID(), h.DataNodes())
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := h.WaitLive(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := h.Stop(); err != nil {
		t.Fatal(err)
	}
	// The first handle reaps its child asynchronously: give it a moment.
	for deadline := time.Now().Add(5 * time.Second); c.Running(cluster.NameNode) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if c.Running(cluster.NameNode) {
		t.Fatal("namenode survived Stop through the attached handle")
	}
	if _, err := cluster.Attach(cfg.BaseDir); !errors.Is(err, cluster.ErrNoState) {
		t.Fatalf("state.json not removed: %v", err)
	}
	if left := cluster.ProcessesMentioning(cfg.BaseDir + "/"); len(left) > 0 {
		t.Fatalf("processes left: %v", left)
	}
}

func loadAvg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	return string(bytes.TrimSpace(b))
}

func currentUser(t *testing.T) string {
	t.Helper()
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	return u.Username
}
