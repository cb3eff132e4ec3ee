package conformance

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/colinmarc/hdfs/v2"

	"github.com/newtricks/newtricks/harness/cluster"
	"github.com/newtricks/newtricks/harness/extcluster"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

const nnHookBean = "Hadoop:service=NameNode,name=NewtricksNameNodeHook"

// waitNameNodeExt waits until namenode-ext serves (and so has subscribed): on a first start,
// what the NameNode did before that is nobody's event.
func waitNameNodeExt(t *testing.T, ns pb.NamespaceClient) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := extcluster.WaitServing(ctx, func(ctx context.Context) error {
		_, err := ns.RecentEvents(ctx, &pb.RecentEventsRequest{Limit: 1})
		return err
	}); err != nil {
		t.Fatalf("namenode-ext: %v", err)
	}
}

// closeCounts returns how many CLOSE events namenode-ext holds per path under prefix.
func closeCounts(ctx context.Context, ns pb.NamespaceClient, prefix string) (map[string]int, error) {
	resp, err := ns.RecentEvents(ctx, &pb.RecentEventsRequest{PathPrefix: prefix})
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, e := range resp.GetEvents() {
		if n := e.GetNamespace(); n != nil && n.GetType() == "CLOSE" {
			out[n.GetPath()]++
		}
	}
	return out, nil
}

// writer writes small files name-0000, name-0001, ... until stop is closed, and records the
// ones whose close succeeded (a write that fails while the NameNode is down is skipped).
type writer struct {
	mu      sync.Mutex
	written []string
	failed  int
}

func (w *writer) run(c *cluster.Cluster, user, prefix string, stop <-chan struct{}, done func()) {
	defer done()
	var cl *hdfs.Client
	defer func() {
		if cl != nil {
			cl.Close()
		}
	}()
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		if cl == nil {
			var err error
			if cl, err = c.Client(user); err != nil {
				cl = nil
				time.Sleep(200 * time.Millisecond)
				continue
			}
		}
		name := fmt.Sprintf("%s-%04d", prefix, i)
		if err := writeFile(cl, name, []byte(name), 0o644); err != nil {
			w.mu.Lock()
			w.failed++
			w.mu.Unlock()
			time.Sleep(200 * time.Millisecond)
			// A client whose NameNode went away may keep a dead connection: start afresh.
			cl.Close()
			cl = nil
			continue
		}
		w.mu.Lock()
		w.written = append(w.written, name)
		w.mu.Unlock()
	}
}

func (w *writer) names() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.written...)
}

// TestNameNodeRestartMidStreamLosesNoClose: namenode-ext is frozen (so nothing written from
// then on is acknowledged) while files are written and the NameNode is restarted under the
// writer. The new NameNode's hook must resume after the last durable txid it persisted: every
// CLOSE written while namenode-ext was frozen or the NameNode was down reaches the new
// namenode-ext exactly once, and none acknowledged before the freeze is delivered again.
func TestNameNodeRestartMidStreamLosesNoClose(t *testing.T) {
	a := artifacts(t)
	c, lay := startCluster(t, a, extcluster.Options{Name: "nn-restart", DataNodes: 1,
		NameNodeSite: map[string]string{"newtricks.namenode.ext.events.subscribe": "CREATE,CLOSE"}})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ns, conn, err := extcluster.NamespaceClient(lay)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	waitNameNodeExt(t, ns)
	root, err := c.Client(superuser(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := root.MkdirAll("/ev", 0o777); err != nil {
		t.Fatal(err)
	}
	root.Close()

	// Before: every CLOSE is delivered and acknowledged.
	var before writer
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go before.run(c, "alice", "/ev/before", stop, wg.Done)
	time.Sleep(2 * time.Second)
	close(stop)
	wg.Wait()
	if len(before.names()) == 0 {
		t.Fatal("nothing written before the restart")
	}
	eventually(t, 10*time.Second, "CLOSE of every file written before the freeze", func() error {
		got, err := closeCounts(ctx, ns, "/ev/before")
		if err != nil {
			return err
		}
		for _, n := range before.names() {
			if got[n] != 1 {
				return fmt.Errorf("%s: %d CLOSE events, want 1", n, got[n])
			}
		}
		return nil
	})
	time.Sleep(2 * time.Second) // the hook persists the durable txid at most once a second

	// Freeze namenode-ext, keep writing, restart the NameNode under the writer.
	pids, err := c.Children(cluster.NameNode, "namenode-ext")
	if err != nil || len(pids) != 1 {
		t.Fatalf("namenode-ext pids %v: %v", pids, err)
	}
	if err := syscall.Kill(pids[0], syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	var during writer
	stop = make(chan struct{})
	wg.Add(1)
	go during.run(c, "alice", "/ev/during", stop, wg.Done)
	time.Sleep(2 * time.Second)
	restartStart := time.Now()
	if err := c.RestartNameNode(ctx); err != nil {
		close(stop)
		wg.Wait()
		t.Fatalf("restart NameNode: %v", err)
	}
	t.Logf("NameNode restarted in %v", time.Since(restartStart).Round(time.Millisecond))
	time.Sleep(2 * time.Second)
	close(stop)
	wg.Wait()
	names := during.names()
	if len(names) < 2 {
		t.Fatalf("only %d files written across the restart", len(names))
	}

	took := eventually(t, 30*time.Second, "every CLOSE written across the restart at the new namenode-ext, once", func() error {
		got, err := closeCounts(ctx, ns, "/ev/during")
		if err != nil {
			return err
		}
		for _, n := range names {
			if got[n] != 1 {
				return fmt.Errorf("%s: %d CLOSE events, want 1 (of %d files)", n, got[n], len(names))
			}
		}
		return nil
	})
	again, err := closeCounts(ctx, ns, "/ev/before")
	if err != nil {
		t.Fatal(err)
	}
	if len(again) != 0 {
		t.Errorf("%d CLOSE events acknowledged durable before the freeze were delivered again: the hook did not resume after its persisted txid", len(again))
	}
	// The restarted hook read what namenode-ext never acknowledged from finalized segments
	// (metrics2 refreshes JMX every 10 s).
	var bean map[string]any
	eventually(t, 25*time.Second, "JournalCatchUpOps > 0 in the restarted NameNode's JMX", func() error {
		var err error
		if bean, err = jmx(c.NameNodeHTTPAddr(), nnHookBean); err != nil {
			return err
		}
		if bean["JournalInstalled"] != float64(1) {
			return fmt.Errorf("the event journal is not installed: %v", bean)
		}
		if ops, _ := bean["JournalCatchUpOps"].(float64); ops <= 0 {
			return fmt.Errorf("JournalCatchUpOps = %v", bean["JournalCatchUpOps"])
		}
		return nil
	})
	t.Logf("%d files written across the freeze and restart (%d writes failed while the NameNode was down); all CLOSEs delivered %v later; hook: PersistedTxid=%v JournalCatchUpOps=%v EditLogRolls=%v",
		len(names), during.failed, took, bean["PersistedTxid"], bean["JournalCatchUpOps"], bean["EditLogRolls"])
}

// TestNameNodeServesWithAFailingEventJournal: the event journal's writes throw. The NameNode
// must keep serving (the journal is not required: JournalSet disables it), and CLOSE events
// must still arrive, read from finalized edit-log segments.
func TestNameNodeServesWithAFailingEventJournal(t *testing.T) {
	a := artifacts(t)
	c, lay := startCluster(t, a, extcluster.Options{Name: "failing-journal", DataNodes: 1,
		NameNodeSite: map[string]string{
			"newtricks.namenode.ext.events.subscribe": "CLOSE",
			"newtricks.events.journal.inject-failure": "true",
		}})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns, conn, err := extcluster.NamespaceClient(lay)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	waitNameNodeExt(t, ns)
	cl, err := c.Client(superuser(t))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var names []string
	for i := 0; i < 20; i++ {
		name := fmt.Sprintf("/fj-%02d", i)
		if err := writeFile(cl, name, []byte(name), 0o644); err != nil {
			t.Fatalf("write %s with a failing event journal: %v", name, err)
		}
		if got, err := cl.ReadFile(name); err != nil || string(got) != name {
			t.Fatalf("read %s: %q, %v", name, got, err)
		}
		names = append(names, name)
	}
	took := eventually(t, 20*time.Second, "CLOSE events despite the failing journal", func() error {
		got, err := closeCounts(ctx, ns, "/fj-")
		if err != nil {
			return err
		}
		for _, n := range names {
			if got[n] != 1 {
				return fmt.Errorf("%s: %d CLOSE events, want 1", n, got[n])
			}
		}
		return nil
	})
	bean, _ := jmx(c.NameNodeHTTPAddr(), nnHookBean)
	t.Logf("NameNode served 20 writes and reads with the journal failing; CLOSEs arrived %v after the last write, read from finalized segments (hook: %v)", took, bean)
}
