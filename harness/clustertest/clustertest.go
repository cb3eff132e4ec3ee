// Package clustertest starts real HDFS clusters (package cluster) from tests: it skips
// clearly when the machine cannot or should not run one, always tears the cluster down, and
// prints every daemon's log tail when the test fails.
//
// Cluster tests run only when NEWTRICKS_CLUSTER_TESTS=1 (`make test` sets it), so a plain
// `go test ./...` stays fast and passes without Java or Hadoop.
package clustertest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/newtricks/newtricks/harness/cluster"
)

// EnvGate is the environment variable that must be "1" for cluster tests to run.
const EnvGate = "NEWTRICKS_CLUSTER_TESTS"

// LogTailLines is how many lines of each daemon's log a failing test prints.
const LogTailLines = 80

// Skip skips t unless cluster tests are enabled and cfg could start (java on PATH, Hadoop
// jars present). It returns cfg with defaults that depend on the environment filled in.
func Skip(t testing.TB, cfg cluster.Config) cluster.Config {
	t.Helper()
	if os.Getenv(EnvGate) != "1" {
		t.Skipf("real-HDFS cluster test: set %s=1 to run (after `make hadoop`)", EnvGate)
	}
	if cfg.HadoopLib == "" {
		cfg.HadoopLib = cluster.DefaultHadoopLib()
	}
	if err := cluster.CheckRuntime(cfg); err != nil {
		t.Skipf("real-HDFS cluster test: %v", err)
	}
	return cfg
}

// Start starts a cluster for t (see Skip for when it skips instead). An empty cfg.BaseDir
// becomes a fresh directory under t.TempDir(); an empty cfg.Name becomes the test's name.
// The cluster is stopped in t.Cleanup (also after a panic), and if t failed by then, the
// tail of every daemon's log is written to the test output. A failed start fails t now.
func Start(t testing.TB, cfg cluster.Config) *cluster.Cluster {
	t.Helper()
	cfg = Skip(t, cfg)
	if cfg.Name == "" {
		cfg.Name = sanitize(t.Name())
	}
	if cfg.BaseDir == "" {
		cfg.BaseDir = filepath.Join(t.TempDir(), cfg.Name)
	}
	c, err := cluster.Start(context.Background(), cfg)
	if err != nil {
		// The daemons are gone but their logs are still in the base dir (until t's cleanup).
		t.Logf("logs of cluster %s:\n%s", cfg.Name, logTails(cfg.BaseDir, LogTailLines))
		t.Fatalf("start cluster %s: %v", cfg.Name, err)
	}
	t.Logf("cluster %s up in %v: namenode %s (http %s), %d datanodes, base %s",
		cfg.Name, c.StartupTime().Round(1e6), c.NameNodeAddr(), c.NameNodeHTTPAddr(), len(c.DataNodes()), c.BaseDir())
	t.Cleanup(func() {
		if t.Failed() {
			var b strings.Builder
			c.DumpLogs(&b, LogTailLines)
			t.Logf("logs of cluster %s:\n%s", cfg.Name, b.String())
		}
		if err := c.Stop(); err != nil {
			t.Errorf("stop cluster %s: %v", cfg.Name, err)
		}
	})
	return c
}

// logTails is the tail of every daemon log under baseDir (<daemon>/<daemon>.log and
// client/haadmin.log).
func logTails(baseDir string, n int) string {
	var b strings.Builder
	logs, _ := filepath.Glob(filepath.Join(baseDir, "*", "*.log"))
	for _, l := range logs {
		data, err := os.ReadFile(l)
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
		if len(lines) > n {
			lines = lines[len(lines)-n:]
		}
		fmt.Fprintf(&b, "----- %s\n%s\n", l, strings.Join(lines, "\n"))
	}
	return b.String()
}

func sanitize(name string) string {
	b := []byte(name)
	for i, ch := range b {
		ok := ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '-' || ch == '_' || ch == '.'
		if !ok {
			b[i] = '_'
		}
	}
	if len(b) > 60 {
		b = b[len(b)-60:]
	}
	if len(b) == 0 || b[0] == '_' || b[0] == '.' || b[0] == '-' {
		b = append([]byte("c"), b...)
	}
	return string(b)
}

// LogUsage logs every daemon's CPU time and resident memory so far (cluster.Usage) and the
// totals, as one "USAGE" line per daemon.
func LogUsage(t testing.TB, c *cluster.Cluster, when string) {
	t.Helper()
	var cpu time.Duration
	var rss int64
	var b strings.Builder
	for _, u := range c.Usage() {
		cpu += u.CPU
		rss += u.RSS
		fmt.Fprintf(&b, "\n  %-14s cpu %6.2fs  rss %4d MiB", u.Daemon, u.CPU.Seconds(), u.RSS>>20)
	}
	t.Logf("USAGE %s %s: cpu %.1fs, rss %d MiB in all (JVMs only)%s", c.Name(), when, cpu.Seconds(), rss>>20, b.String())
}
