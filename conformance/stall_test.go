package conformance

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/newtricks/newtricks/internal/exttest"
)

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// TestStalledEventStreamDoesNotSlowNameNode: a co-process that stops reading its event
// stream must leave getfileinfo latency within 2x of a plugin-free NameNode, and the hook
// must count what it drops.
func TestStalledEventStreamDoesNotSlowNameNode(t *testing.T) {
	a := artifacts(t)
	stall := filepath.Join(t.TempDir(), "stallext")
	if out, err := exec.Command("go", "build", "-o", stall, "./testdata/stallext").CombinedOutput(); err != nil {
		t.Fatalf("build stallext: %v\n%s", err, out)
	}
	const calls = 3000
	measure := func(o exttest.Options) ([]time.Duration, string) {
		c, _ := startCluster(t, a, o)
		defer c.Stop()
		cl, err := c.Client("alice")
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		if err := writeFile(cl, "/tmp-probe", []byte("x"), 0o644); err != nil {
			// "/" is writable only by the superuser; use the superuser client for setup.
			root, err := c.Client(superuser(t))
			if err != nil {
				t.Fatal(err)
			}
			defer root.Close()
			if err := writeFile(root, "/tmp-probe", []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for i := 0; i < 500; i++ { // warm up the JIT and the connection
			if _, err := cl.Stat("/tmp-probe"); err != nil {
				t.Fatal(err)
			}
		}
		lat := make([]time.Duration, 0, calls)
		for i := 0; i < calls; i++ {
			start := time.Now()
			if _, err := cl.Stat("/tmp-probe"); err != nil {
				t.Fatal(err)
			}
			lat = append(lat, time.Since(start))
		}
		bean := ""
		if !o.NoHooks {
			// metrics2 caches JMX attributes for up to 10 s.
			eventually(t, 20*time.Second, "AuditDropped > 0 in the NameNode's JMX", func() error {
				b, err := jmx(c.NameNodeHTTPAddr(), "Hadoop:service=NameNode,name=NewtricksNameNodeHook")
				if err != nil {
					return err
				}
				bean = fmt.Sprint(b)
				if dropped, _ := b["AuditDropped"].(float64); dropped <= 0 {
					return fmt.Errorf("AuditDropped = %v after %d audited calls with a stalled co-process and a queue of 1000: %v", b["AuditDropped"], calls+500, b)
				}
				return nil
			})
		}
		return lat, bean
	}
	base, _ := measure(exttest.Options{Name: "plain", DataNodes: 1, NoHooks: true})
	stalled, bean := measure(exttest.Options{Name: "stalled", DataNodes: 1, NameNodeExt: stall,
		NameNodeSite: map[string]string{"newtricks.audit.queue.capacity": "1000"}})
	mb, ms := median(base), median(stalled)
	t.Logf("getfileinfo median: plain %v, stalled co-process %v, ratio %.2f; hook: %s", mb, ms, float64(ms)/float64(mb), bean)
	if ms > 2*mb {
		t.Fatalf("getfileinfo median %v with a stalled co-process is more than 2x the plain NameNode's %v", ms, mb)
	}
}
