package conformance

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/colinmarc/hdfs/v2"

	"github.com/newtricks/newtricks/harness/extcluster"
)

func median(d []time.Duration) time.Duration { return percentile(d, 50) }

func percentile(d []time.Duration, p int) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := (len(s)*p + 99) / 100
	return s[max(0, min(i, len(s))-1)]
}

// TestStalledEventStreamDoesNotSlowNameNode: a co-process that was healthy and acknowledged
// batches, then stopped reading its event stream (while still answering health checks), must
// leave getfileinfo latency within 2x of a plugin-free NameNode at the median and 3x at P99,
// and the hook must count what it drops. The two NameNodes are measured in alternating blocks.
func TestStalledEventStreamDoesNotSlowNameNode(t *testing.T) {
	a := artifacts(t)
	stall := filepath.Join(t.TempDir(), "stallext")
	if out, err := exec.Command("go", "build", "-o", stall, "./testdata/stallext").CombinedOutput(); err != nil {
		t.Fatalf("build stallext: %v\n%s", err, out)
	}
	type side struct {
		name string
		cl   *hdfs.Client
		http string
		lat  []time.Duration
	}
	open := func(name string, o extcluster.Options) *side {
		o.Name, o.DataNodes = name, 1
		c, _ := startCluster(t, a, o)
		root, err := c.Client(superuser(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { root.Close() })
		if err := writeFile(root, "/probe", []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		cl, err := c.Client("alice")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cl.Close() })
		return &side{name: name, cl: cl, http: c.NameNodeHTTPAddr()}
	}
	plain := open("plain", extcluster.Options{NoHooks: true})
	stalled := open("stalled", extcluster.Options{NameNodeExt: stall,
		NameNodeSite: map[string]string{"newtricks.audit.queue.capacity": "1000"}})
	stat := func(s *side, n int, record bool) {
		for i := 0; i < n; i++ {
			start := time.Now()
			if _, err := s.cl.Stat("/probe"); err != nil {
				t.Fatalf("%s: getfileinfo: %v", s.name, err)
			}
			if record {
				s.lat = append(s.lat, time.Since(start))
			}
		}
	}
	// Before the stall: the co-process is healthy and acknowledged the first batches (metrics2
	// refreshes JMX every 10 s).
	eventually(t, 30*time.Second, "stallext healthy and acknowledging batches", func() error {
		stat(stalled, 50, false)
		b, err := jmx(stalled.http, nnHookBean)
		if err != nil {
			return err
		}
		if b["CoprocessHealthy"] != float64(1) {
			return fmt.Errorf("not healthy: %v", b)
		}
		if d, _ := b["BatchesDelivered"].(float64); d < 1 {
			return fmt.Errorf("no batch acknowledged yet: %v", b)
		}
		return nil
	})
	stat(plain, 500, false) // warm up the JIT and the connections
	stat(stalled, 500, false)
	const blocks, per = 8, 400
	for b := 0; b < blocks; b++ {
		order := []*side{plain, stalled}
		if b%2 == 1 {
			order = []*side{stalled, plain}
		}
		for _, s := range order {
			stat(s, per, true)
		}
	}
	var bean map[string]any
	eventually(t, 25*time.Second, "AuditDropped > 0 with the co-process still healthy", func() error {
		b, err := jmx(stalled.http, nnHookBean)
		if err != nil {
			return err
		}
		bean = b
		if dropped, _ := b["AuditDropped"].(float64); dropped <= 0 {
			return fmt.Errorf("AuditDropped = %v after %d audited calls with a stalled co-process and a queue of 1000: %v", b["AuditDropped"], blocks*per, b)
		}
		if b["CoprocessHealthy"] != float64(1) {
			return fmt.Errorf("the stalled co-process is not healthy, so nothing was queued: %v", b)
		}
		return nil
	})
	mb, ms := median(plain.lat), median(stalled.lat)
	pb99, ps99 := percentile(plain.lat, 99), percentile(stalled.lat, 99)
	t.Logf("getfileinfo, %d alternating blocks of %d: median plain %v, stalled %v (ratio %.2f); P99 plain %v, stalled %v (ratio %.2f); hook: AuditQueued=%v AuditDropped=%v BatchesDelivered=%v BatchesFailed=%v",
		blocks, per, mb, ms, float64(ms)/float64(mb), pb99, ps99, float64(ps99)/float64(pb99),
		bean["AuditQueued"], bean["AuditDropped"], bean["BatchesDelivered"], bean["BatchesFailed"])
	if ms > 2*mb {
		t.Errorf("getfileinfo median %v with a stalled co-process is more than 2x the plain NameNode's %v", ms, mb)
	}
	if ps99 > 3*pb99 {
		t.Errorf("getfileinfo P99 %v with a stalled co-process is more than 3x the plain NameNode's %v", ps99, pb99)
	}
}
