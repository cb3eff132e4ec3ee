package cluster_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/colinmarc/hdfs/v2"
	"github.com/colinmarc/hdfs/v2/hadoopconf"

	"github.com/newtricks/newtricks/harness/cluster"
	"github.com/newtricks/newtricks/harness/clustertest"
)

// TestHAManual is the life of an HA cluster without ZooKeeper: NameNode 1 initialised with
// -bootstrapStandby, NameNode 0 made active with DFSHAAdmin, a manual failover, a restart of
// the active NameNode (RestartNameNode), and an attached Stop that leaves nothing behind.
// Automatic failover (ZKFCs, kill -9) is conformance/ha_test.go's.
func TestHAManual(t *testing.T) {
	cfg := cluster.Config{
		DataNodes: 2,
		HA:        &cluster.HAConfig{Manual: true, BootstrapStandby: true, Nameservice: "hatest"},
		HDFSSite:  map[string]string{"dfs.blocksize": "1048576"},
		// Eight JVMs, some one after another (bootstrapStandby waits for NameNode 0).
		StartupTimeout: 3 * time.Minute,
	}
	c := clustertest.Start(t, cfg)
	t.Logf("STARTUP %s: HA (manual, bootstrapStandby) 2 NameNodes + 3 JournalNodes + 2 DataNodes ready in %v", c.Name(), c.StartupTime().Round(time.Millisecond))
	clustertest.LogUsage(t, c, "after start")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	if !c.HA() || c.Nameservice() != "hatest" || c.URI() != "hdfs://hatest" {
		t.Fatalf("HA %v nameservice %q uri %q", c.HA(), c.Nameservice(), c.URI())
	}
	wantDaemons := "journalnode-0 journalnode-1 journalnode-2 namenode-0 namenode-1 datanode-0 datanode-1"
	var names []string
	for _, d := range c.Daemons() {
		names = append(names, string(d))
		if !c.Running(d) {
			t.Errorf("%s not running after Start", d)
		}
	}
	if got := strings.Join(names, " "); got != wantDaemons {
		t.Errorf("daemons %q, want %q", got, wantDaemons)
	}
	assertStates(t, ctx, c, cluster.StateActive, cluster.StateStandby)
	if out, err := c.HAAdmin(ctx, "-getServiceState", "nn1"); err != nil || strings.TrimSpace(lastLine(out)) != "standby" {
		t.Errorf("haadmin -getServiceState nn1: %q, %v", out, err)
	}
	// NameNode 1 was bootstrapped from NameNode 0: the same namespace.
	if a, b := versionField(t, c, 0, "namespaceID"), versionField(t, c, 1, "namespaceID"); a == "" || a != b {
		t.Errorf("namespaceID nn0 %q nn1 %q", a, b)
	}

	// Clients of the nameservice: the harness's options and the client conf dir, as
	// colinmarc/hdfs reads a HADOOP_CONF_DIR.
	conf, err := hadoopconf.Load(c.ClientConfDir())
	if err != nil {
		t.Fatal(err)
	}
	fromConf := hdfs.ClientOptionsFromConf(conf)
	if !sameSet(fromConf.Addresses, c.NameNodeAddrs()) {
		t.Errorf("client conf names %v, the cluster's NameNodes are %v", fromConf.Addresses, c.NameNodeAddrs())
	}
	cl, err := c.Client(currentUser(t))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.MkdirAll("/tmp", 0o777); err != nil {
		t.Fatal(err)
	}
	data := payload(3<<20 + 17)
	writeFile(t, cl, "/tmp/ha-before", data)
	readEqual(t, cl, "/tmp/ha-before", data)

	began := time.Now()
	if err := c.Failover(ctx, 0, 1); err != nil {
		t.Fatal(err)
	}
	t.Logf("FAILOVER manual nn0 -> nn1 (DFSHAAdmin -failover) in %v", time.Since(began).Round(time.Millisecond))
	assertStates(t, ctx, c, cluster.StateStandby, cluster.StateActive)
	if err := c.Failover(ctx, 0, 1); err == nil {
		t.Error("Failover from the standby succeeded")
	}
	// The client moves on from the standby (after its 5 s backoff if it met both NameNodes as
	// standby during the handover).
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := cl.ReadFile("/tmp/ha-before")
		if err == nil && len(got) == len(data) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("read after the failover: %d bytes, %v", len(got), err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	readEqual(t, cl, "/tmp/ha-before", data)
	writeFile(t, cl, "/tmp/ha-after", data[:1000])

	// RestartNameNode restarts the active one (nn1): nn0 takes over, nn1 comes back standby.
	began = time.Now()
	if err := c.RestartNameNode(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("RESTART of the active NameNode (failover to nn0 first) in %v", time.Since(began).Round(time.Millisecond))
	assertStates(t, ctx, c, cluster.StateActive, cluster.StateStandby)
	cl2, err := c.Client(currentUser(t))
	if err != nil {
		t.Fatal(err)
	}
	defer cl2.Close()
	readEqual(t, cl2, "/tmp/ha-after", data[:1000])
	readEqual(t, cl2, "/tmp/ha-before", data)

	if err := c.KillZKFC(0); !errors.Is(err, cluster.ErrNotHA) {
		t.Errorf("KillZKFC without ZKFCs: %v", err)
	}
	if err := c.KillNameNode(2); !errors.Is(err, cluster.ErrNoNameNode) {
		t.Errorf("KillNameNode(2): %v", err)
	}

	// Another process (the CLI) attaches and stops everything.
	a, err := cluster.Attach(c.BaseDir())
	if err != nil {
		t.Fatal(err)
	}
	if got := len(a.Daemons()); got != len(names) {
		t.Errorf("attached cluster has %d daemons, want %d", got, len(names))
	}
	if i, err := a.ActiveNameNode(ctx); err != nil || i != 0 {
		t.Errorf("attached: active %d, %v", i, err)
	}
	if err := a.Stop(); err != nil {
		t.Fatal(err)
	}
	if left := cluster.ProcessesMentioning(c.BaseDir() + string(filepath.Separator)); len(left) > 0 {
		t.Fatalf("processes left after Stop: %v", left)
	}
}

func assertStates(t *testing.T, ctx context.Context, c *cluster.Cluster, want ...string) {
	t.Helper()
	for i, w := range want {
		if s, err := c.NameNodeState(ctx, i); err != nil || s != w {
			t.Errorf("namenode %d: state %q (%v), want %q", i, s, err, w)
		}
	}
	if i, err := c.ActiveNameNode(ctx); err != nil || want[i] != cluster.StateActive {
		t.Errorf("ActiveNameNode = %d, %v; want the one in state active of %v", i, err, want)
	}
	for i := range want {
		st, err := c.Status(ctx)
		if err != nil {
			t.Errorf("status: %v", err)
			break
		}
		_ = i
		if len(st.LiveNodes) == 0 {
			t.Errorf("active namenode sees no DataNodes")
		}
		break
	}
}

func versionField(t *testing.T, c *cluster.Cluster, i int, key string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(c.NameNodes()[i].NameDir, "current", "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, key+"="); ok {
			return v
		}
	}
	return ""
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[string]int{}
	for _, x := range a {
		m[x]++
	}
	for _, x := range b {
		m[x]--
	}
	for _, n := range m {
		if n != 0 {
			return false
		}
	}
	return true
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
