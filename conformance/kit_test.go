package conformance

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/newtricks/newtricks/conformance/kit"
	"github.com/newtricks/newtricks/harness/cluster"
	"github.com/newtricks/newtricks/harness/extcluster"
)

// TestKit runs the conformance kit (conformance/kit: the cases that also run against any
// cluster named by addresses, `newtricks conformance`) on a cluster the harness starts, fault
// cases included: here the kit may kill co-processes.
func TestKit(t *testing.T) {
	a := artifacts(t)
	base := t.TempDir()
	cfg, lay, err := extcluster.Setup(a, base, extcluster.Options{Name: "kit", DataNodes: 3,
		NameNodeSite: map[string]string{"newtricks.namenode.ext.events.subscribe": "CREATE,CLOSE"},
		// The DataNodes share this host with whatever else runs: their governors never shed,
		// so the offload cases see the DataNodes transform (as the compose conf does).
		DataNodeSite: func(int) map[string]string {
			return map[string]string{"newtricks.datanode.ext.offload.cpu.high": "1", "newtricks.datanode.ext.offload.cpu.low": "1"}
		}})
	if err != nil {
		t.Fatal(err)
	}
	// A generous start: the kit's cases, not the start-up time, are what this test checks,
	// and a shared CI machine can be slow to start four JVMs.
	cfg.StartupTimeout = 5 * time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	c, err := cluster.Start(ctx, cfg)
	if err != nil {
		t.Fatalf("start cluster: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			var b bytes.Buffer
			c.DumpLogs(&b, 60)
			dumpExtLogs(&b, filepath.Join(base, "ext-logs"), 40)
			t.Logf("logs of cluster kit:\n%s", b.String())
		}
		if err := c.Stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
		os.RemoveAll(lay.SocketDir)
	})
	kit.Run(t, kit.FromHarness(c, lay, []string{filepath.Join(hadoopLib(a), "*"), a.HooksJar}))
}
