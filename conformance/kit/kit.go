package kit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/colinmarc/hdfs/v2"
	"google.golang.org/grpc"

	"github.com/newtricks/newtricks/internal/hdfsio"
	"github.com/newtricks/newtricks/namenode-ext/hotspot/hintclient"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// Run runs every case of the kit against c under go test.
func Run(t *testing.T, c Cluster) {
	t.Helper()
	run(goT{t}, c)
}

// RunStandalone runs the cases whose name matches filter (nil: all) against c outside go
// test, printing progress to w, and returns the results.
func RunStandalone(w io.Writer, c Cluster, filter *regexp.Regexp) *Result {
	res := &Result{}
	// The top level sets the cluster up for every case; the filter picks among its cases.
	top := &standalone{name: "kit", out: w, filter: filter, res: res, mu: &sync.Mutex{}, top: true}
	if r := top.run(func(t T) { run(t, c) }); r.Outcome == Failed && res.Fail == 0 {
		// It failed outside every case: the set-up.
		res.Cases = append(res.Cases, r)
		res.Fail++
		fmt.Fprintf(w, "--- FAIL: %s (%.1fs): %s\n", r.Name, r.Duration.Seconds(), r.Reason)
	}
	return res
}

// Case is one case of the kit.
type Case struct {
	Name string
	// Fault says what fault the case injects; such a case runs only when the engine offers
	// Faults and is skipped with this reason otherwise.
	Fault string
	run   func(t T, e *Env)
}

// Cases lists the kit's cases in the order they run.
func Cases() []Case {
	return []Case{
		{Name: "hints raise and restore", run: caseHints},
		{Name: "events arrive", run: caseEvents},
		{Name: "offload returns the local bytes", run: caseOffload},
		{Name: "permission denial", run: casePermission},
		{Name: "doctor clean", run: caseDoctor},
		{Name: "namenode-ext killed mid-hint: the factor is still restored", Fault: "kills namenode-ext", run: caseKillNameNodeExt},
		{Name: "datanode-ext killed: its hook restarts it and offload serves again", Fault: "kills a datanode-ext", run: caseKillDataNodeExt},
	}
}

// Env is what every case shares: the cluster, HDFS clients as the superuser and the two
// ordinary users, and the run's own directory (owned by User).
type Env struct {
	C   Cluster
	Ctx context.Context
	// Dir is Root/<run id>, owned by C.User; removed at the end.
	Dir             string
	SU, FS, OtherFS *hdfs.Client
	NS              pb.NamespaceClient
	// Directory is namenode-ext's directory of datanode-ext endpoints, as readers find them.
	Directory pb.DataNodeDirectoryClient
	// LiveDataNodes the NameNode reported when the kit started.
	LiveDataNodes int
}

func run(t T, c Cluster) {
	t.Helper()
	c.defaults()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	t.Cleanup(cancel)
	h, err := WaitHealthy(ctx, &c, 0, 2*time.Minute)
	if err != nil {
		t.Fatalf("cluster %s is not healthy: %v", c.Name, err)
	}
	t.Logf("cluster %s: NameNode %s (web %s), namenode-ext %s, %d live DataNodes, datanode-ext %s; superuser %s, users %s and %s",
		c.Name, c.NameNode, c.NameNodeHTTP, c.NameNodeAPI, h.LiveDataNodes, strings.Join(c.DataNodeAPIs, " "), c.Superuser, c.User, c.Other)
	e := &Env{C: c, Ctx: ctx, LiveDataNodes: h.LiveDataNodes}
	e.SU = client(t, c, c.Superuser)
	e.FS = client(t, c, c.User)
	e.OtherFS = client(t, c, c.Other)
	cc, err := grpc.NewClient(c.NameNodeAPI, dialOpts()...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	e.NS = pb.NewNamespaceClient(cc)
	e.Directory = pb.NewDataNodeDirectoryClient(cc)

	// The run's directory, made by the superuser and given to User; everything the kit makes
	// lies below it and goes with it.
	id := make([]byte, 4)
	_, _ = rand.Read(id)
	e.Dir = path.Join(c.Root, time.Now().UTC().Format("20060102-150405")+"-"+hex.EncodeToString(id))
	rootExisted := exists(e.SU, c.Root)
	if err := e.SU.MkdirAll(e.Dir, 0o755); err != nil {
		t.Fatalf("make the kit's directory %s as the superuser %s: %v", e.Dir, c.Superuser, err)
	}
	t.Cleanup(func() { e.cleanup(t, rootExisted) })
	if err := e.SU.Chown(e.Dir, c.User, c.User); err != nil {
		t.Fatalf("chown %s to %s as %s: %v (is %s the HDFS superuser? set superuser)", e.Dir, c.User, c.Superuser, err, c.Superuser)
	}
	t.Logf("working in %s (owned by %s)", e.Dir, c.User)

	for _, k := range Cases() {
		k := k
		t.Run(k.Name, func(t T) {
			if k.Fault != "" && c.Faults == nil {
				t.Skipf("needs fault injection (%s): the kit cannot reach the processes of a cluster named by addresses; "+
					"it runs under the harness (go test ./conformance -run TestKit) and against `newtricks cluster up` (newtricks conformance --name NAME)", k.Fault)
			}
			k.run(t, e)
		})
	}
}

// cleanup ends the users' hints and removes the run's directory (and Root, if the kit made it
// and nothing else is in it).
func (e *Env) cleanup(t T, rootExisted bool) {
	for _, u := range []string{e.C.User, e.C.Other} {
		hc, err := hintclient.Dial(e.C.NameNodeAPI, u, dialOpts()...)
		if err != nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		if list, err := hc.List(ctx); err == nil {
			for _, h := range list {
				if _, err := hc.Cancel(ctx, h.ID); err != nil {
					t.Logf("cleanup: cancel hint %s of %s: %v", h.ID, u, err)
				}
			}
		}
		cancel()
		hc.Close()
	}
	if err := e.SU.RemoveAll(e.Dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Errorf("cleanup: remove %s: %v", e.Dir, err)
	}
	if !rootExisted {
		if list, err := e.SU.ReadDir(e.C.Root); err == nil && len(list) == 0 {
			_ = e.SU.Remove(e.C.Root)
		}
	}
}

func exists(c *hdfs.Client, p string) bool {
	_, err := c.Stat(p)
	return err == nil
}

func client(t T, c Cluster, user string) *hdfs.Client {
	t.Helper()
	cl, err := hdfs.NewClient(hdfs.ClientOptions{Addresses: []string{c.NameNode}, User: user})
	if err != nil {
		t.Fatalf("HDFS client for %s as %s: %v", c.NameNode, user, err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

// write creates name as cl's user with replication (0: the cluster's default) and data.
func write(ctx context.Context, cl *hdfs.Client, name string, replication int, data []byte, perm os.FileMode) error {
	if replication == 0 {
		return hdfsio.WriteFile(ctx, cl, name, data)
	}
	w, err := cl.CreateFile(name, replication, 1<<20, perm)
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		w.Close()
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	return hdfsio.CloseFile(cctx, w)
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

// eventually polls cond every 200 ms until it returns nil or within passes; then the case
// fails naming what did not happen and the last error.
func eventually(t T, within time.Duration, what string, cond func() error) time.Duration {
	t.Helper()
	start := time.Now()
	var err error
	for time.Since(start) < within {
		if err = cond(); err == nil {
			return time.Since(start)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s: not within %v: %v", what, within, err)
	return 0
}

// replication returns the replication factor of name.
func replication(c *hdfs.Client, name string) (int, error) { return hdfsio.Replication(c, name) }

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
