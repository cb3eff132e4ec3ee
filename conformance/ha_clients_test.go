package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/newtricks/newtricks/harness/cluster"
	"github.com/newtricks/newtricks/harness/extcluster"
	"github.com/newtricks/newtricks/internal/apiclient"
	"github.com/newtricks/newtricks/internal/nsclient"
	"github.com/newtricks/newtricks/internal/siteconf"
	"github.com/newtricks/newtricks/namenode-ext/hotspot/hintclient"
	"github.com/newtricks/newtricks/namenode-ext/mirror/mirrorclient"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// haClients are clients of TestHATricks's nameservice configured as a trainer would: one
// given both namenode-ext addresses, one given the nameservice and the cluster's client conf
// dir. Each never knows which NameNode is active. While the test kills and fails over
// NameNodes, a loop keeps calling (hints listed, the mirror's status, a file located), and
// every call must succeed: the failover connection rides out the takeover window.
type haClients struct {
	hints   *hintclient.Client   // --addr A,B
	nsHints *hintclient.Client   // --nameservice, from ClientConfDir
	mirror  *mirrorclient.Client // --nameservice
	ns      *apiclient.Conn      // Namespace over A,B
	addrs   []string
	user    string
	probe   string

	stop chan struct{}
	wg   sync.WaitGroup

	mu      sync.Mutex
	calls   int
	failed  []string
	longest time.Duration
	what    string
}

// clientCallTimeout bounds one call of the loop: far above a takeover (kill -9 to active in
// 2-21 s here), below the failover policy's own bound (15 attempts, about 2.5 min).
const clientCallTimeout = 90 * time.Second

func startHAClients(t *testing.T, c *cluster.Cluster, lay extcluster.Layout, user, probe string) *haClients {
	t.Helper()
	ns, err := siteconf.LoadNameService(c.ClientConfDir(), c.Nameservice())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(ns.APIs(), ",") != strings.Join(lay.NameNodeAPIs, ",") || strings.Join(ns.RPCs(), ",") != strings.Join(c.NameNodeAddrs(), ",") {
		t.Fatalf("nameservice %s from the client conf: namenode-ext %v and NameNodes %v, the cluster's are %v and %v",
			c.Nameservice(), ns.APIs(), ns.RPCs(), lay.NameNodeAPIs, c.NameNodeAddrs())
	}
	h := &haClients{addrs: lay.NameNodeAPIs, user: user, probe: probe, stop: make(chan struct{})}
	both := strings.Join(lay.NameNodeAPIs, ",")
	if h.hints, err = hintclient.Dial(both, user); err != nil {
		t.Fatal(err)
	}
	if h.nsHints, err = hintclient.Dial(strings.Join(ns.APIs(), ","), user); err != nil {
		t.Fatal(err)
	}
	if h.mirror, err = mirrorclient.Dial(strings.Join(ns.APIs(), ","), user); err != nil {
		t.Fatal(err)
	}
	if h.ns, err = apiclient.Dial(both); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		h.hints.Close()
		h.nsHints.Close()
		h.mirror.Close()
		h.ns.Close()
	})
	h.wg.Add(1)
	go h.loop()
	return h
}

func (h *haClients) call(what string, f func(ctx context.Context) error) {
	ctx, cancel := context.WithTimeout(context.Background(), clientCallTimeout)
	defer cancel()
	began := time.Now()
	err := f(ctx)
	d := time.Since(began)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls++
	if err != nil {
		h.failed = append(h.failed, fmt.Sprintf("%s after %v: %v", what, d.Round(time.Millisecond), err))
	}
	if d > h.longest {
		h.longest, h.what = d, what
	}
}

func (h *haClients) loop() {
	defer h.wg.Done()
	for {
		select {
		case <-h.stop:
			return
		case <-time.After(250 * time.Millisecond):
		}
		h.call("hints list over both addresses", func(ctx context.Context) error { _, err := h.hints.List(ctx); return err })
		h.call("hints list over the nameservice", func(ctx context.Context) error { _, err := h.nsHints.List(ctx); return err })
		h.call("mirror status over the nameservice", func(ctx context.Context) error { _, err := h.mirror.Status(ctx, "", ""); return err })
		h.call("locate over both addresses", func(ctx context.Context) error {
			lb, err := nsclient.LocateMany(ctx, pb.NewNamespaceClient(h.ns), h.user, []string{h.probe})
			if err == nil && (len(lb) != 1 || len(lb[0].GetBlocks()) == 0) {
				err = fmt.Errorf("located %v", lb)
			}
			return err
		})
	}
}

// finish stops the loop and checks that no call failed.
func (h *haClients) finish(t *testing.T) {
	t.Helper()
	close(h.stop)
	h.wg.Wait()
	h.mu.Lock()
	defer h.mu.Unlock()
	t.Logf("CLIENTS of the nameservice across the kills and failovers: %d calls, %d failed; the longest, %s, took %v (the takeover window a client saw; load %s)",
		h.calls, len(h.failed), h.what, h.longest.Round(time.Millisecond), loadAverage())
	for _, f := range h.failed {
		t.Errorf("a client of the nameservice failed: %s", f)
	}
	if h.calls < 8 {
		t.Errorf("only %d client calls made", h.calls)
	}
}

// pythonHint runs newtricks.hint from this tree's python/src over addrs (the standby's
// first, so the call fails over) as user: a hint raised to replication 2 on path and ended;
// it returns the hint's id and the address that answered.
func pythonHint(t *testing.T, ctx context.Context, addrs []string, user, path string) (string, string) {
	t.Helper()
	py := os.Getenv("NEWTRICKS_PY_CLIENT")
	if py == "" {
		cache := os.Getenv("NEWTRICKS_CACHE")
		if cache == "" {
			home, _ := os.UserHomeDir()
			cache = filepath.Join(home, ".cache", "newtricks")
		}
		py = filepath.Join(cache, "venv-python", "bin", "python")
	}
	if _, err := os.Stat(py); err != nil {
		t.Fatalf("the Python client's interpreter (NEWTRICKS_PY_CLIENT, the venv make python-venv builds) is missing: %v", err)
	}
	src, err := filepath.Abs(filepath.Join("..", "python", "src"))
	if err != nil {
		t.Fatal(err)
	}
	const script = `import json, sys, newtricks
addrs, user, path = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
with newtricks.hint(path, readers=4, replication=2, window=60, addr=addrs, user=user, timeout=90) as h:
    st = h.wait_ready(timeout=60)
    print(json.dumps({"id": h.id, "addr": h._ch.addr, "ready": st.ready, "module": newtricks.__file__}))
`
	arg, _ := json.Marshal(addrs)
	cctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(cctx, py, "-c", script, string(arg), user, path)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+src)
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("python hint over %v: %v\n%s%s", addrs, err, out, stderr)
	}
	var r struct {
		ID, Addr, Module string
		Ready            bool
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("python hint printed %q: %v", out, err)
	}
	if !r.Ready || !strings.HasPrefix(r.Module, src) {
		t.Fatalf("python hint: %+v (want ready, newtricks from %s)", r, src)
	}
	return r.ID, r.Addr
}
