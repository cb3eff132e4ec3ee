package conformance

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/colinmarc/hdfs/v2"
	"github.com/colinmarc/hdfs/v2/hadoopconf"

	"github.com/newtricks/newtricks/harness/cluster"
	"github.com/newtricks/newtricks/harness/clustertest"
	"github.com/newtricks/newtricks/harness/extcluster"
)

// startHACluster starts an HA cluster with the hooks per o (o.HA set) and stops it at the
// end of the test; a failed start or test prints every daemon's and co-process's log.
func startHACluster(t *testing.T, a extcluster.Artifacts, o extcluster.Options) (*cluster.Cluster, extcluster.Layout) {
	t.Helper()
	base := t.TempDir()
	cfg, lay, err := extcluster.Setup(a, base, o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cfg.StartupTimeout = 3 * time.Minute
	c, err := cluster.Start(ctx, cfg)
	if err != nil {
		var b bytes.Buffer
		logs, _ := filepath.Glob(filepath.Join(base, "*", "*.log"))
		for _, l := range logs {
			if data, err := os.ReadFile(l); err == nil {
				fmt.Fprintf(&b, "==> %s <==\n%s\n", l, tailLines(string(data), 40))
			}
		}
		t.Fatalf("start HA cluster: %v\n%s", err, b.String())
	}
	t.Cleanup(func() {
		if t.Failed() {
			var b bytes.Buffer
			c.DumpLogs(&b, 60)
			dumpExtLogs(&b, filepath.Join(base, "ext-logs"), 40)
			t.Logf("logs of cluster %s:\n%s", o.Name, b.String())
		}
		if err := c.Stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
		os.RemoveAll(lay.SocketDir)
	})
	return c, lay
}

// TestHA runs an HA nameservice with the hooks on both NameNodes: two NameNodes over three
// JournalNodes, DataNodes reporting to both, ZooKeeper and a ZKFC per NameNode. A client of
// the nameservice writes and reads; a manual failover (DFSHAAdmin -failover, through the
// ZKFCs) and an automatic one (kill -9 of the active NameNode: its ZKFC gives up the lock,
// the other ZKFC promotes the standby) each move the active role, and the data stays
// readable through the same client; the killed NameNode comes back as the standby.
func TestHA(t *testing.T) {
	a := artifacts(t)
	c, lay := startHACluster(t, a, extcluster.Options{Name: "ha", DataNodes: 2, HA: &cluster.HAConfig{Nameservice: "ha"}})
	t.Logf("STARTUP HA: 2 NameNodes + 3 JournalNodes + ZooKeeper + 2 ZKFCs + 2 DataNodes (hooks on) ready in %v (load %s)",
		c.StartupTime().Round(time.Millisecond), loadAverage())
	clustertest.LogUsage(t, c, "after start")
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()

	// Both NameNodes up, NameNode 0 active, 1 standby; each sees both DataNodes.
	wantStates(t, ctx, c, cluster.StateActive, cluster.StateStandby)
	for _, nn := range c.NameNodes() {
		if !nn.Running {
			t.Fatalf("namenode %d not running", nn.Index)
		}
		if live := liveDataNodes(t, nn.HTTPAddr); live != 2 {
			t.Errorf("namenode %d (%s) sees %d live DataNodes, want 2", nn.Index, nn.ID, live)
		}
	}
	// The hooks run on both NameNodes, each namenode-ext on its own ports.
	if len(lay.NameNodeAPIs) != 2 || lay.NameNodeAPIs[0] == lay.NameNodeAPIs[1] || lay.NameNodeMetricsAddrs[0] == lay.NameNodeMetricsAddrs[1] {
		t.Fatalf("co-process ports of the two NameNodes: %v %v", lay.NameNodeAPIs, lay.NameNodeMetricsAddrs)
	}
	for i := range 2 {
		eventually(t, 90*time.Second, fmt.Sprintf("namenode-ext of namenode %d listening on %s", i, lay.NameNodeAPIs[i]), func() error {
			pids, err := c.Children(cluster.HANameNode(i), "namenode-ext")
			if err != nil || len(pids) != 1 {
				return fmt.Errorf("namenode-ext children %v (%v)", pids, err)
			}
			conn, err := net.DialTimeout("tcp", lay.NameNodeAPIs[i], time.Second)
			if err != nil {
				return err
			}
			return conn.Close()
		})
	}

	// A client of the nameservice, configured as colinmarc/hdfs reads a HADOOP_CONF_DIR.
	conf, err := hadoopconf.Load(c.ClientConfDir())
	if err != nil {
		t.Fatal(err)
	}
	opts := hdfs.ClientOptionsFromConf(conf)
	if len(opts.Addresses) != 2 {
		t.Fatalf("client conf names %v, want both NameNodes", opts.Addresses)
	}
	opts.User = superuser(t)
	cl, err := hdfs.NewClient(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.MkdirAll("/ha", 0o755); err != nil {
		t.Fatal(err)
	}
	first := randomBytes(t, 2<<20+5)
	if err := writeFile(cl, "/ha/first", first, 0o644); err != nil {
		t.Fatal(err)
	}
	mustRead(t, cl, "/ha/first", first)

	// Manual failover nn0 -> nn1 with DFSHAAdmin (the ZKFCs carry it out).
	began := time.Now()
	if err := c.Failover(ctx, 0, 1); err != nil {
		t.Fatal(err)
	}
	t.Logf("FAILOVER manual (DFSHAAdmin -failover nn0 nn1) in %v", time.Since(began).Round(time.Millisecond))
	wantStates(t, ctx, c, cluster.StateStandby, cluster.StateActive)
	// The client's NameNode is now standby: it moves on to nn1, unless it met both as standby
	// during the handover and waits out its 5 s backoff (BUILDING.md).
	afterManual := eventually(t, 30*time.Second, "read through the nameservice after the manual failover", func() error {
		return readsBack(cl, "/ha/first", first)
	})
	t.Logf("the client read again %v after the manual failover", afterManual.Round(time.Millisecond))
	second := randomBytes(t, 1<<20+3)
	if err := writeFile(cl, "/ha/second", second, 0o644); err != nil {
		t.Fatal(err)
	}

	// Automatic failover: kill -9 the active NameNode (nn1); nn0's ZKFC promotes nn0.
	killed := c.NameNodes()[1].PID
	began = time.Now()
	if err := c.KillNameNode(1); err != nil {
		t.Fatal(err)
	}
	active, err := c.WaitActive(ctx)
	promoted := time.Since(began)
	if err != nil {
		t.Fatal(err)
	}
	if active != 0 {
		t.Fatalf("after kill -9 of nn1 the active NameNode is %d, want 0", active)
	}
	if c.Running(cluster.HANameNode(1)) {
		t.Fatalf("namenode 1 (pid %d) still running after KillNameNode", killed)
	}
	readable := eventually(t, time.Minute, "read through the nameservice after the automatic failover", func() error {
		return readsBack(cl, "/ha/second", second)
	})
	t.Logf("FAILOVER automatic (kill -9 of the active nn1): nn0 active and out of safe mode %v after the kill, the client read again %v later (load %s)",
		promoted.Round(time.Millisecond), readable.Round(time.Millisecond), loadAverage())
	if promoted > 45*time.Second {
		t.Errorf("automatic failover took %v, want well under 45s (ZKFC health check 1s, fencing shell(/bin/true))", promoted)
	}
	mustRead(t, cl, "/ha/first", first)

	// The killed NameNode comes back on its dirs and ports as the standby, and its ZKFC
	// rejoins the election.
	began = time.Now()
	if err := c.StartNameNode(ctx, 1); err != nil {
		t.Fatal(err)
	}
	t.Logf("namenode 1 back as standby in %v", time.Since(began).Round(time.Millisecond))
	wantStates(t, ctx, c, cluster.StateActive, cluster.StateStandby)
	if c.NameNodes()[1].PID == killed {
		t.Error("namenode 1 has the killed pid")
	}
	third := randomBytes(t, 4096)
	if err := writeFile(cl, "/ha/third", third, 0o644); err != nil {
		t.Fatal(err)
	}
	mustRead(t, cl, "/ha/third", third)
}

// wantStates checks each NameNode's HA state (by index) and that ActiveNameNode agrees.
func wantStates(t *testing.T, ctx context.Context, c *cluster.Cluster, want ...string) {
	t.Helper()
	for i, w := range want {
		if s, err := c.NameNodeState(ctx, i); err != nil || s != w {
			t.Fatalf("namenode %d is %q (%v), want %q", i, s, err, w)
		}
	}
	i, err := c.ActiveNameNode(ctx)
	if err != nil || want[i] != cluster.StateActive {
		t.Fatalf("ActiveNameNode = %d, %v; want the active one of %v", i, err, want)
	}
}

// liveDataNodes is a NameNode's count of live DataNodes (its own JMX).
func liveDataNodes(t *testing.T, httpAddr string) int {
	t.Helper()
	b, err := jmx(httpAddr, "Hadoop:service=NameNode,name=FSNamesystemState")
	if err != nil {
		t.Fatalf("jmx of %s: %v", httpAddr, err)
	}
	n, _ := b["NumLiveDataNodes"].(float64)
	return int(n)
}

func readsBack(cl *hdfs.Client, name string, want []byte) error {
	got, err := cl.ReadFile(name)
	if err != nil {
		return err
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("read %s: %d bytes differ from the %d written", name, len(got), len(want))
	}
	return nil
}

func mustRead(t *testing.T, cl *hdfs.Client, name string, want []byte) {
	t.Helper()
	if err := readsBack(cl, name, want); err != nil {
		t.Fatal(err)
	}
}

// TestHASecure runs the HA nameservice Kerberized (cluster.Secure): the JournalNodes and
// ZKFCs log in from keytabs, the standby tails edits over SPNEGO, DFSHAAdmin runs as the
// NameNodes' principal. A Kerberized client of the nameservice reads across a manual and an
// automatic failover, and a delegation token issued by one NameNode is known to the other
// (the secret manager's state travels in the shared edit log).
func TestHASecure(t *testing.T) {
	a := artifacts(t)
	s := startSecureCluster(t, a, extcluster.Options{Name: "hasec", DataNodes: 2, HA: &cluster.HAConfig{}})
	c := s.c
	t.Logf("STARTUP secure HA: KDC + 2 NameNodes + 3 JournalNodes + ZooKeeper + 2 ZKFCs + 2 DataNodes (hooks on) ready in %v (load %s)",
		c.StartupTime().Round(time.Millisecond), loadAverage())
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	wantStates(t, ctx, c, cluster.StateActive, cluster.StateStandby)
	if c.Authentication() != "kerberos" {
		t.Fatalf("authentication %q", c.Authentication())
	}

	cl := s.hdfsClient(t, cluster.PrincipalHDFS)
	if err := cl.MkdirAll("/hasec", 0o755); err != nil {
		t.Fatal(err)
	}
	data := randomBytes(t, 1<<20+11)
	if err := writeSmall(cl, "/hasec/f", data, 0o644); err != nil {
		t.Fatal(err)
	}
	mustRead(t, cl, "/hasec/f", data)
	token, err := s.sec.DelegationToken(ctx, c, "alice") // from the active, nn0
	if err != nil || token == "" {
		t.Fatalf("delegation token from nn0: %q, %v", token, err)
	}

	began := time.Now()
	if err := c.Failover(ctx, 0, 1); err != nil {
		t.Fatal(err)
	}
	t.Logf("FAILOVER manual, Kerberized (DFSHAAdmin as %s) in %v", cluster.PrincipalHDFS, time.Since(began).Round(time.Millisecond))
	wantStates(t, ctx, c, cluster.StateStandby, cluster.StateActive)
	eventually(t, 30*time.Second, "Kerberized read after the manual failover", func() error {
		return readsBack(cl, "/hasec/f", data)
	})
	// nn1 knows nn0's token: cancelling it there succeeds, and only once.
	if err := s.sec.CancelDelegationToken(ctx, c, "alice", token); err != nil {
		t.Fatalf("cancel nn0's token on nn1: %v", err)
	}
	if err := s.sec.CancelDelegationToken(ctx, c, "alice", token); err == nil {
		t.Fatal("a cancelled token was cancelled again")
	}

	began = time.Now()
	if err := c.KillNameNode(1); err != nil {
		t.Fatal(err)
	}
	if active, err := c.WaitActive(ctx); err != nil || active != 0 {
		t.Fatalf("after kill -9 of nn1: active %d, %v", active, err)
	}
	t.Logf("FAILOVER automatic, Kerberized (kill -9 of nn1): nn0 active in %v", time.Since(began).Round(time.Millisecond))
	eventually(t, time.Minute, "Kerberized read after the automatic failover", func() error {
		return readsBack(cl, "/hasec/f", data)
	})
	// The CLI over both namenode-ext addresses, the dead NameNode's first, with Kerberos: each
	// address gets its own TLS server name and the service principal's _HOST its host.
	pattern := strings.Replace(cluster.PrincipalNewtricks, "localhost", "_HOST", 1)
	out, err := exec.CommandContext(ctx, a.NewtricksCLI, "hint", "list", "--json",
		"--addr", s.lay.NameNodeAPIs[1]+","+s.lay.NameNodeAPIs[0], "--ca", s.sec.CACert,
		"--keytab", s.sec.KDC.Keytab("alice"), "--principal", "alice", "--spn", pattern,
		"--krb5-conf", s.sec.KDC.Krb5Conf).CombinedOutput()
	if err != nil {
		t.Fatalf("Kerberized hint list over both addresses (--spn %s) after the kill: %v\n%s", pattern, err, out)
	}
}
