package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/newtricks/newtricks/harness/cluster"
	"github.com/newtricks/newtricks/harness/extcluster"
)

// artifacts returns the built parts. Without NEWTRICKS_CLUSTER_TESTS=1 (plain `go test`) the
// test is skipped; with it (`make test`) a missing artefact fails the test: a suite that skips
// when the build broke would pass with nothing tested.
func artifacts(t *testing.T) extcluster.Artifacts {
	t.Helper()
	if os.Getenv("NEWTRICKS_CLUSTER_TESTS") != "1" {
		t.Skip("conformance tests need real Hadoop: run `make test` (sets NEWTRICKS_CLUSTER_TESTS=1)")
	}
	a, err := extcluster.ArtifactsFromEnv()
	if err != nil {
		t.Fatalf("NEWTRICKS_CLUSTER_TESTS=1 but a build artefact is missing: %v", err)
	}
	if a.HadoopLibDir == "" {
		t.Fatal("NEWTRICKS_CLUSTER_TESTS=1 but NEWTRICKS_HADOOP_LIB is not set (make test sets it)")
	}
	if _, err := os.Stat(a.HadoopLibDir); err != nil {
		t.Fatalf("NEWTRICKS_CLUSTER_TESTS=1 but the Hadoop jars are missing: %v (run make hadoop)", err)
	}
	return a
}

// startCluster starts a cluster with the hooks per o, stops it at the end of the test, and
// dumps daemon and co-process logs if the test failed.
func startCluster(t *testing.T, a extcluster.Artifacts, o extcluster.Options) (*cluster.Cluster, extcluster.Layout) {
	t.Helper()
	base := t.TempDir()
	cfg, lay, err := extcluster.Setup(a, base, o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
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
			t.Logf("logs of cluster %s:\n%s", o.Name, b.String())
		}
		if err := c.Stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
		os.RemoveAll(lay.SocketDir)
	})
	return c, lay
}

func dumpExtLogs(b *bytes.Buffer, dir string, n int) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	more, _ := filepath.Glob(filepath.Join(dir, "*", "*.log"))
	files = append(files, more...)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
		if len(lines) > n {
			lines = lines[len(lines)-n:]
		}
		fmt.Fprintf(b, "==> %s <==\n%s\n", f, strings.Join(lines, "\n"))
	}
}

// superuser is the HDFS superuser of a harness cluster: the OS user running the NameNode.
func superuser(t *testing.T) string {
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	return u.Username
}

// eventually polls cond every 50 ms until it returns nil or the timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() error) time.Duration {
	t.Helper()
	start := time.Now()
	var err error
	for time.Since(start) < timeout {
		if err = cond(); err == nil {
			return time.Since(start)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s: not within %v: %v", what, timeout, err)
	return 0
}

// jmx returns the attributes of one NameNode/DataNode JMX bean.
func jmx(httpAddr, query string) (map[string]any, error) {
	resp, err := http.Get("http://" + httpAddr + "/jmx?qry=" + query)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Beans []map[string]any `json:"beans"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, err
	}
	if len(body.Beans) == 0 {
		return nil, fmt.Errorf("no JMX bean %s", query)
	}
	return body.Beans[0], nil
}

// processStart returns when process pid started, from /proc/<pid>/stat.
func processStart(pid int) (time.Time, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return time.Time{}, err
	}
	// Field 22 (starttime, clock ticks since boot) comes after the ")" closing the comm.
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+2:]))
	ticks, err := strconv.ParseInt(fields[19], 10, 64)
	if err != nil {
		return time.Time{}, err
	}
	up, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return time.Time{}, err
	}
	uptime, err := strconv.ParseFloat(strings.Fields(string(up))[0], 64)
	if err != nil {
		return time.Time{}, err
	}
	const hz = 100 // USER_HZ is 100 on Linux/amd64
	boot := time.Now().Add(-time.Duration(uptime * float64(time.Second)))
	return boot.Add(time.Duration(ticks) * time.Second / hz), nil
}
