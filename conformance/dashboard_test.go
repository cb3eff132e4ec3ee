package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/newtricks/newtricks/cmd/newtricks/doctor"
	"github.com/newtricks/newtricks/docs"
	"github.com/newtricks/newtricks/harness/extcluster"
	"github.com/newtricks/newtricks/internal/hdfsio"
	"github.com/newtricks/newtricks/namenode-ext/hotspot"
	"github.com/newtricks/newtricks/namenode-ext/hotspot/hintclient"
)

// dashboardPath is docs/grafana/newtricks.json, found from this file's directory.
func dashboardPath(t *testing.T) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller")
	}
	return filepath.Join(filepath.Dir(file), "..", "docs", "grafana", "newtricks.json")
}

// TestDashboardMetricsExist runs a cluster with the hooks, hot-file hints and the checkpoint
// mirror enabled, makes it do what the dashboard shows (events, a hint created with
// `newtricks hint create --wait`, made ready, done and restored), and then requires every
// metric the Grafana dashboard queries to be on a co-process's /metrics.
func TestDashboardMetricsExist(t *testing.T) {
	qs, err := docs.DashboardQueries(dashboardPath(t))
	if err != nil {
		t.Fatal(err)
	}
	a := artifacts(t)
	c, lay := startCluster(t, a, extcluster.Options{Name: "dashboard", DataNodes: 3,
		NameNodeSite: map[string]string{
			"newtricks.hotspot.allowed-prefixes": "/hot",
			"newtricks.hotspot.poll-interval":    "300ms",
			// The mirror's metrics exist once it runs; its destination need not answer.
			"newtricks.mirror.rules":            "ckpt",
			"newtricks.mirror.rule.ckpt.source": "/ckpt/{job}/step_{step}",
			"newtricks.mirror.dest.namenode":    "127.0.0.1:1",
		}})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	su, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	root, err := c.Client(su.Username)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if err := root.MkdirAll("/hot", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := root.Chown("/hot", "alice", "alice"); err != nil {
		t.Fatal(err)
	}
	alice, err := c.Client("alice")
	if err != nil {
		t.Fatal(err)
	}
	defer alice.Close()
	w, err := alice.CreateFile("/hot/f", 1, blockSize, 0o644) // one replica: the hint adds two
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(randomBytes(t, 1<<20)); err != nil {
		t.Fatal(err)
	}
	if err := hdfsio.CloseFile(ctx, w); err != nil {
		t.Fatal(err)
	}

	// namenode-ext serves hints once it is configured and hotspot has loaded its state.
	hc, err := hintclient.Dial(lay.NameNodeAPI, "alice")
	if err != nil {
		t.Fatal(err)
	}
	defer hc.Close()
	probe := func(ctx context.Context) error {
		_, err := hc.Create(ctx, hintclient.Hint{Paths: []string{"/hot/f"}, For: time.Minute, Readers: 64, DryRun: true})
		return err
	}
	wctx, wcancel := context.WithTimeout(ctx, 90*time.Second)
	defer wcancel()
	if err := extcluster.WaitServing(wctx, probe); err != nil {
		t.Fatalf("namenode-ext hints: %v", err)
	}

	// The CLI waits for the hint with its progress as JSON lines on stderr.
	cmd := exec.CommandContext(ctx, a.NewtricksCLI, "hint", "create", "--addr", lay.NameNodeAPI, "--user", "alice",
		"--paths", "/hot/f", "--for", "2m", "--readers", "64", "--wait", "--timeout", "2m", "--json")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("newtricks hint create --wait: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	var res struct {
		Plan   hotspot.Plan       `json:"plan"`
		Status hotspot.HintStatus `json:"status"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil || !res.Status.Ready() || res.Plan.HintID == "" {
		t.Fatalf("hint create --wait --json result: %v\n%s", err, stdout.String())
	}
	var last struct {
		Task        string `json:"task"`
		State       string `json:"state"`
		Done, Total int64
	}
	for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		if err := json.Unmarshal([]byte(line), &last); err != nil {
			t.Fatalf("progress line is not JSON: %q", line)
		}
	}
	if last.Task != "replicas placed" || last.State != "done" || last.Total != 2 || last.Done != 2 {
		t.Errorf("last progress line %+v, want replicas placed done 2/2:\n%s", last, stderr.String())
	}
	t.Logf("hint create --wait progress:\n%s", stderr.String())
	if out, err := exec.CommandContext(ctx, a.NewtricksCLI, "hint", "done", "--addr", lay.NameNodeAPI, "--user", "alice", res.Plan.HintID).CombinedOutput(); err != nil {
		t.Fatalf("hint done: %v\n%s", err, out)
	}

	addrs := append([]string{lay.NameNodeMetrics}, lay.DataNodeMetrics...)
	var missing []string
	eventually(t, 90*time.Second, "every dashboard metric on a co-process's /metrics", func() error {
		have := map[string]bool{}
		for _, addr := range addrs {
			fams, err := doctor.Scrape(ctx, http.DefaultClient, addr)
			if err != nil {
				return err
			}
			for name, vals := range fams {
				if len(vals) > 0 {
					have[name] = true
				}
			}
		}
		missing = missing[:0]
		for _, m := range docs.AllMetrics(qs) {
			if !have[m] {
				missing = append(missing, m)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("missing: %s", strings.Join(missing, ", "))
		}
		return nil
	})
	t.Logf("all %d metrics of the dashboard's %d queries are exposed", len(docs.AllMetrics(qs)), len(qs))
}
