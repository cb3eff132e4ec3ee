package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/user"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/colinmarc/hdfs/v2"

	"github.com/newtricks/newtricks/harness/cluster"
	"github.com/newtricks/newtricks/internal/hdfsio"
)

// The "clients" operation: a workload of this benchmark's own, because NNThroughputBenchmark
// cannot produce the traffic the typical configuration consumes. Its paths all lie under its
// -baseDirName, so a mirror prefix there would make every create forward events (not a part of
// them), and its open phase opens each file once, from one client name and one user, so the
// reactive hints' repeat hold (a (command, path) pair must be audited K times within W) never
// releases a record and no file ever has K distinct openers. Here several colinmarc/hdfs
// clients, each as a user of its own (on loopback every client is 127.0.0.1, so only distinct
// users are distinct clients to reactive hints), create and close empty files, half of them
// under the typical mirror prefix, rename a quarter and delete a quarter of them (half of each
// under the prefix), and open a
// small set of hot files again and again, each opened by every client.

// workloadOpName is the name of the workload among -ops.
const workloadOpName = "clients"

// workload is the shape of one "clients" run.
type workload struct {
	clients int // concurrent clients, each its own user (nnload-<i>)
	files   int // files created (and closed) in all; half under the mirror prefix
	hot     int // hot files, each opened by every client opensPer times
}

// opensPer is how often each client opens each hot file: about as many opens in all as files.
func (w workload) opensPer() int { return max(1, w.files/(w.clients*w.hot)) }

// perClient is how many files each client creates.
func (w workload) perClient() int { return max(4, w.files/w.clients) }

// ops is the count of client operations of one run: each create+close, rename, delete and
// open+read of one byte is one.
func (w workload) ops() int {
	n := w.perClient()
	renames, deletes := 0, 0
	for j := 0; j < n; j++ {
		switch j % 8 {
		case 0, 1:
			renames++
		case 2, 3:
			deletes++
		}
	}
	return w.clients * (n + renames + deletes + w.opensPer()*w.hot)
}

// prepared is one run's clients and paths, set up before the timed phase.
type prepared struct {
	w       workload
	clients []*hdfs.Client
	dirs    [][2]string // per client: under the mirror prefix, elsewhere
	hot     []string
	cleanup []string // what the superuser removes after the run
}

// prepare makes the run's directories (mode 0777, as the HDFS superuser), the hot files (one
// byte each: a zero-length file is never asked for its blocks, so its open is not audited as
// "open") and one client per user. Nothing of it is timed.
func prepare(ctx context.Context, s side, w workload, tag string) (*prepared, error) {
	me, err := user.Current()
	if err != nil {
		return nil, err
	}
	su, err := s.c.Client(me.Username)
	if err != nil {
		return nil, err
	}
	defer su.Close()
	p := &prepared{w: w}
	mirBase := mirrorPrefix + "job" + tag
	plainBase := "/nnload/" + tag
	p.cleanup = []string{mirBase, plainBase}
	mkdir := func(d string) error {
		if err := su.MkdirAll(d, 0o777); err != nil {
			return err
		}
		return su.Chmod(d, 0o777)
	}
	for i := 0; i < w.clients; i++ {
		d := [2]string{fmt.Sprintf("%s/step_%d/c%d", mirBase, 0, i), fmt.Sprintf("%s/c%d", plainBase, i)}
		for _, x := range d {
			if err := mkdir(x); err != nil {
				return nil, fmt.Errorf("mkdir %s: %w", x, err)
			}
		}
		p.dirs = append(p.dirs, d)
	}
	if err := mkdir(plainBase + "/hot"); err != nil {
		return nil, err
	}
	for k := 0; k < w.hot; k++ {
		name := fmt.Sprintf("%s/hot/h-%03d", plainBase, k)
		if err := hdfsio.WriteFile(ctx, su, name, []byte{'x'}); err != nil {
			return nil, fmt.Errorf("hot file %s: %w", name, err)
		}
		p.hot = append(p.hot, name)
	}
	for i := 0; i < w.clients; i++ {
		cl, err := s.c.Client(fmt.Sprintf("nnload-%d", i))
		if err != nil {
			p.close()
			return nil, err
		}
		p.clients = append(p.clients, cl)
	}
	return p, nil
}

func (p *prepared) close() {
	for _, c := range p.clients {
		c.Close()
	}
	p.clients = nil
}

// run is the timed phase: every client at once, each creating its files (alternately under
// the mirror prefix and elsewhere), then renaming a quarter and deleting a quarter of them
// (half of each under the prefix), then opening every hot file opensPer times (reading its byte: that asks for the
// blocks, the audited "open"). It returns the first error.
func (p *prepared) run(ctx context.Context) error {
	var wg sync.WaitGroup
	errs := make([]error, len(p.clients))
	n := p.w.perClient()
	reps := p.w.opensPer()
	for i, cl := range p.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = func() error {
				name := func(j int) string { return fmt.Sprintf("%s/f-%05d", p.dirs[i][j%2], j) }
				for j := 0; j < n; j++ {
					if ctx.Err() != nil {
						return ctx.Err()
					}
					f, err := cl.Create(name(j))
					if err != nil {
						return err
					}
					if err := f.Close(); err != nil {
						return fmt.Errorf("close %s: %w", name(j), err)
					}
				}
				// Of every eight files, two are renamed and two deleted, one of each pair
				// under the mirror prefix (even j) and one elsewhere.
				for j := 0; j < n; j++ {
					switch j % 8 {
					case 0, 1:
						if err := cl.Rename(name(j), name(j)+".r"); err != nil {
							return err
						}
					case 2, 3:
						if err := cl.Remove(name(j)); err != nil {
							return err
						}
					}
				}
				var b [1]byte
				for r := 0; r < reps; r++ {
					for k := range p.hot {
						// Each client starts at another hot file, so the opens of one file
						// come from different clients close together.
						h := p.hot[(k+i)%len(p.hot)]
						f, err := cl.Open(h)
						if err != nil {
							return err
						}
						if _, err := f.Read(b[:]); err != nil && err != io.EOF {
							f.Close()
							return fmt.Errorf("read %s: %w", h, err)
						}
						f.Close()
					}
				}
				return nil
			}()
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("client nnload-%d: %w", i, err)
		}
	}
	return nil
}

// remove deletes what the run made (as the superuser, after the measurement).
func (p *prepared) remove(s side) error {
	me, err := user.Current()
	if err != nil {
		return err
	}
	su, err := s.c.Client(me.Username)
	if err != nil {
		return err
	}
	defer su.Close()
	for _, d := range p.cleanup {
		if err := su.RemoveAll(d); err != nil {
			return err
		}
	}
	return nil
}

// extCounters are namenode-ext's own counts of what it received (its Prometheus metrics:
// exact at every read, unlike the hook's JMX bean, which metrics2 caches for 10 s).
type extCounters struct {
	audit, namespace, triggers float64
}

func (a extCounters) minus(b extCounters) extCounters {
	return extCounters{a.audit - b.audit, a.namespace - b.namespace, a.triggers - b.triggers}
}

// readExt reads namenode-ext's counters from its metrics address.
func readExt(ctx context.Context, addr string) (extCounters, error) {
	var c extCounters
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return c, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return c, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return c, fmt.Errorf("GET %s/metrics: %s", addr, resp.Status)
	}
	return parseExt(resp.Body)
}

// parseExt takes the counters out of a Prometheus text exposition.
func parseExt(r io.Reader) (extCounters, error) {
	var c extCounters
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		i := strings.LastIndexByte(line, ' ')
		if i < 0 || strings.HasPrefix(line, "#") {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		switch line[:i] {
		case `newtricks_events_received_total{kind="audit"}`:
			c.audit = v
		case `newtricks_events_received_total{kind="namespace"}`:
			c.namespace = v
		case "newtricks_hotspot_reactive_triggers_total":
			c.triggers = v
		}
	}
	return c, sc.Err()
}

// drain waits until namenode-ext's received counters have not moved for 500 ms (the
// forwarder lingers 50 ms per batch and is woken by every flush), at most 10 s: the events the
// timed phase caused are then delivered, and their delivery's CPU is in the window.
func drain(ctx context.Context, addr string) (extCounters, error) {
	deadline := time.Now().Add(10 * time.Second)
	last, err := readExt(ctx, addr)
	if err != nil {
		return last, err
	}
	stable := time.Now()
	for time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		cur, err := readExt(ctx, addr)
		if err != nil {
			return cur, err
		}
		if cur != last {
			last, stable = cur, time.Now()
			continue
		}
		if time.Since(stable) >= 500*time.Millisecond {
			break
		}
	}
	return last, nil
}

// hookCounters reads the NameNode hook's JMX bean (NewtricksNameNodeHook): its counters since
// the NameNode started. metrics2 serves a snapshot at most 10 s old, so the benchmark reads it
// once per cluster, after the rounds.
func hookCounters(ctx context.Context, httpAddr string) (map[string]float64, error) {
	bean, err := cluster.JMXBean(ctx, httpAddr, "Hadoop:service=NameNode,name=NewtricksNameNodeHook")
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for k, raw := range bean {
		var f float64
		if json.Unmarshal(raw, &f) == nil {
			out[k] = f
		}
	}
	return out, nil
}

// hookCounterNames are the hook's counters the benchmark prints.
var hookCounterNames = []string{"NamespaceEventsForwarded", "AuditEventsForwarded", "AuditQueued", "AuditHeld",
	"AuditHoldReleased", "AuditHoldExpired", "AuditHoldOverflow", "AuditDropped", "BatchesDelivered",
	// Host calls are namenode-ext's calls into the NameNode (the implicit hints' checks among
	// them): their serving threads are among the hooks' own.
	"HostCalls", "HostCallErrors"}

// isHooks says whether a thread group of threadCPU is the hooks' own: the NameNode JVM's
// newtricks threads (the event forwarder, the supervisor, the shaded gRPC/Netty threads) and
// the co-process.
func isHooks(group string) bool {
	return strings.HasPrefix(group, "newtricks") || strings.HasPrefix(group, "co-process ")
}

// hooksNs sums the hooks' own thread groups.
func hooksNs(parts map[string]int64) int64 {
	var t int64
	for g, ns := range parts {
		if isHooks(g) {
			t += ns
		}
	}
	return t
}

// clientsRun runs one "clients" workload against s: set-up, the timed phase, the drain, and
// clean-up. It returns ops/s over the timed phase, the NameNode group's CPU by thread group
// and in all (ns) over the timed phase plus the drain, the window, and what namenode-ext
// received over it (zero without hooks).
func clientsRun(ctx context.Context, s side, w workload, tag string) (float64, map[string]int64, [2]time.Time, int64, extCounters, error) {
	var win [2]time.Time
	var got extCounters
	p, err := prepare(ctx, s, w, tag)
	if err != nil {
		return 0, nil, win, 0, got, fmt.Errorf("prepare: %w", err)
	}
	defer p.close()
	hooked := !isPlain(s.name)
	var before extCounters
	if hooked {
		// Set-up made events too (mkdirs are not subscribed; the hot files' CLOSEs are
		// outside the mirror prefix): let anything queued arrive before the window opens.
		if before, err = drain(ctx, s.lay.NameNodeMetrics); err != nil {
			return 0, nil, win, 0, got, fmt.Errorf("namenode-ext metrics: %w", err)
		}
	}
	pids := nnPIDs(s.c)
	var u0 int64
	if s.meter != nil {
		if u0, err = s.meter.usage(); err != nil {
			return 0, nil, win, 0, got, err
		}
	}
	t0 := threadCPU(pids)
	win[0] = time.Now()
	err = p.run(ctx)
	elapsed := time.Since(win[0])
	if err != nil {
		return 0, nil, win, 0, got, err
	}
	// Every configuration waits at least as long as a hooked one that had nothing to drain,
	// so the windows compare.
	if hooked {
		after, err := drain(ctx, s.lay.NameNodeMetrics)
		if err != nil {
			return 0, nil, win, 0, got, err
		}
		got = after.minus(before)
	} else {
		time.Sleep(500 * time.Millisecond)
	}
	t1 := threadCPU(pids)
	win[1] = time.Now()
	total := int64(0)
	if s.meter != nil {
		u1, err := s.meter.usage()
		if err != nil {
			return 0, nil, win, 0, got, err
		}
		total = u1 - u0
	}
	parts := map[string]int64{}
	for k, ns := range t1 {
		if d := ns - t0[k]; d > 0 {
			parts[k] = d
		}
	}
	if s.meter == nil {
		total = sum(parts)
	}
	if err := p.remove(s); err != nil {
		return 0, nil, win, 0, got, fmt.Errorf("clean-up: %w", err)
	}
	return float64(w.ops()) / elapsed.Seconds(), parts, win, total, got, nil
}
