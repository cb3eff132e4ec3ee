package conformance

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/colinmarc/hdfs/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/newtricks/newtricks/cmd/newtricks/doctor"
	"github.com/newtricks/newtricks/datanode-ext/offload"
	"github.com/newtricks/newtricks/dataset"
	"github.com/newtricks/newtricks/harness/cluster"
	"github.com/newtricks/newtricks/harness/datasets"
	"github.com/newtricks/newtricks/harness/extcluster"
	"github.com/newtricks/newtricks/internal/hdfsio"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
	xformv1 "github.com/newtricks/newtricks/proto/gen/xformv1"
	"github.com/newtricks/newtricks/reader"
	"github.com/newtricks/newtricks/schedule"
	"github.com/newtricks/newtricks/xformgraph"
	"github.com/newtricks/newtricks/xformgraph/golden"
)

// sheddingNode is the DataNode whose governor the fallback case drives over its threshold;
// the others never shed (cpu.high 1), so that the rest of the suite does not depend on what
// else runs on the machine.
const sheddingNode = 2

func offloadImageGraph() *xformv1.Graph {
	return &xformv1.Graph{Version: 1, Seed: 11, Nodes: []*xformv1.Node{
		xformgraph.NewNodeSpec("dec", "decode_image", "input", nil),
		xformgraph.NewNodeSpec("rrc", "random_resized_crop", "dec", map[string]any{"size": []any{64}}),
		xformgraph.NewNodeSpec("flip", "random_hflip", "rrc", nil),
		xformgraph.NewNodeSpec("norm", "normalize", "flip", map[string]any{"mean": []any{0.485, 0.456, 0.406}, "std": []any{0.229, 0.224, 0.225}}),
		xformgraph.NewNodeSpec("t", "to_tensor", "norm", map[string]any{"layout": "CHW", "dtype": "float32"}),
	}, Outputs: []string{"t"}}
}

func offloadVideoGraph() *xformv1.Graph {
	return &xformv1.Graph{Version: 1, Seed: 12, Nodes: []*xformv1.Node{
		xformgraph.NewNodeSpec("dec", "decode_video", "input", map[string]any{"mode": "random_segment", "num": 4, "width": 64, "height": 48}),
		xformgraph.NewNodeSpec("t", "to_tensor", "dec", map[string]any{"layout": "TCHW", "dtype": "uint8"}),
	}, Outputs: []string{"t"}}
}

type offloadEnv struct {
	c     *cluster.Cluster
	lay   extcluster.Layout
	su    string
	fs    *hdfs.Client
	ns    pb.NamespaceClient
	dir   pb.DataNodeDirectoryClient
	spec  *schedule.Spec
	nodes []pb.OffloadClient
}

func (e *offloadEnv) open(t *testing.T, user string, rank int, start uint64, offload bool) *reader.Reader {
	t.Helper()
	fs := e.fs
	if user != e.su {
		var err error
		if fs, err = e.c.Client(user); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { fs.Close() })
	}
	store := &reader.HDFSStore{Client: fs}
	t.Cleanup(store.Close)
	cfg := reader.Config{User: user, Spec: e.spec, Rank: rank, StartStep: start, Locator: reader.NamespaceLocator{Client: e.ns, User: user},
		Store: store, MaxWait: 20 * time.Second, Retry: 500 * time.Millisecond, Dial: extcluster.Dial}
	if offload {
		// Only namenode-ext's address: the reader finds the nodes in its directory.
		cfg.Directory = reader.NamespaceDirectory{Client: e.dir, User: user}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := reader.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func nextSteps(t *testing.T, r *reader.Reader, n int) []*reader.Step {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out []*reader.Step
	for i := 0; i < n; i++ {
		st, err := r.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, st)
	}
	return out
}

// sameSteps fails unless got equals want sample by sample, byte for byte, and returns how
// many samples took each path.
func sameSteps(t *testing.T, what string, got, want []*reader.Step) map[string]int {
	t.Helper()
	paths := map[string]int{}
	for i := range want {
		for j, w := range want[i].Samples {
			g := got[i].Samples[j]
			paths[g.Path]++
			if got[i].Step != want[i].Step || g.Key != w.Key || g.Epoch != w.Epoch {
				t.Fatalf("%s: step %d slot %d is %q epoch %d, want step %d %q epoch %d", what, got[i].Step, g.Slot, g.Key, g.Epoch, want[i].Step, w.Key, w.Epoch)
			}
			if g.Err != nil || w.Err != nil {
				t.Fatalf("%s: step %d sample %q: error %v (local: %v)", what, got[i].Step, g.Key, g.Err, w.Err)
			}
			if !bytes.Equal(g.Frames, w.Frames) {
				t.Fatalf("%s: step %d sample %q via %s: %d bytes differ from the local %d bytes", what, got[i].Step, g.Key, g.Path, len(g.Frames), len(w.Frames))
			}
		}
	}
	return paths
}

func (e *offloadEnv) status(t *testing.T, i int) *pb.OffloadNodeStatus {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := e.nodes[i].NodeStatus(ctx, &pb.OffloadNodeStatusRequest{User: e.su})
	if err != nil {
		t.Fatalf("node %d status: %v", i, err)
	}
	return st
}

// TestOffload runs the offload cases on one real cluster with real media: JPEGs made by
// ImageMagick and H.264 clips made by the ffmpeg CLI (`make xform-media`), stored as
// WebDataset tar shards and one file per sample in 1 MiB blocks (samples span blocks), indexed
// by the real `newtricks dataset index`.
func TestOffload(t *testing.T) {
	a := artifacts(t)
	mediaDir := os.Getenv("NEWTRICKS_XFORM_MEDIA")
	if mediaDir == "" {
		t.Fatal("NEWTRICKS_XFORM_MEDIA is not set (make test sets it after make xform-media)")
	}
	m, err := datasets.LoadMedia(mediaDir)
	if err != nil {
		t.Fatal(err)
	}
	c, lay := startCluster(t, a, extcluster.Options{Name: "offload", DataNodes: 3,
		HDFSSite: map[string]string{"dfs.blocksize": "1048576"},
		DataNodeSite: func(i int) map[string]string {
			if i == sheddingNode {
				return map[string]string{"newtricks.datanode.ext.offload.cpu.high": "0.95", "newtricks.datanode.ext.offload.cpu.low": "0.85",
					"newtricks.datanode.ext.offload.cpu.interval.ms": "250"}
			}
			return map[string]string{"newtricks.datanode.ext.offload.cpu.high": "1", "newtricks.datanode.ext.offload.cpu.low": "1"}
		}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	e := &offloadEnv{c: c, lay: lay, su: superuser(t)}
	if e.fs, err = c.Client(e.su); err != nil {
		t.Fatal(err)
	}
	defer e.fs.Close()
	ns, nsConn, err := extcluster.NamespaceClient(lay)
	if err != nil {
		t.Fatal(err)
	}
	defer nsConn.Close()
	e.ns, e.dir = ns, pb.NewDataNodeDirectoryClient(nsConn)
	nodes, err := extcluster.DialOffload(ctx, lay, e.su)
	if err != nil {
		t.Fatal(err)
	}
	defer nodes.Close()
	e.nodes = nodes.Clients

	// Two sources: images (tar shards and single files) and clips; the dataset root is
	// world-readable, the secret dataset only for its owner.
	base := t.TempDir()
	spec := &schedule.Spec{Name: "conformance", Seed: 2026, GlobalBatch: 8, WorldSize: 2, MaxSteps: 1000}
	for _, ds := range []struct {
		name   string
		media  datasets.Media
		layout datasets.Layout
		g      *xformv1.Graph
		w      float64
	}{
		{"img", datasets.Media{Images: m.Images}, datasets.Layout{Shards: 2, PerShard: 25, Singles: 6}, offloadImageGraph(), 3},
		{"vid", datasets.Media{Images: m.Videos}, datasets.Layout{Shards: 1, PerShard: 4, Singles: 2}, offloadVideoGraph(), 1},
	} {
		local := filepath.Join(base, ds.name)
		if _, err := datasets.Write(local, ds.media, ds.layout); err != nil {
			t.Fatal(err)
		}
		remote := "/data/" + ds.name
		if err := hdfsio.UploadDir(ctx, e.fs, local, remote); err != nil {
			t.Fatal(err)
		}
		out, err := exec.CommandContext(ctx, a.NewtricksCLI, "dataset", "index", "--namenode", c.NameNodeAddr(), "--user", e.su, remote).CombinedOutput()
		if err != nil {
			t.Fatalf("newtricks dataset index %s: %v\n%s", remote, err, out)
		}
		t.Logf("newtricks dataset index %s:\n%s", remote, out)
		spec.Sources = append(spec.Sources, schedule.Source{Name: ds.name, Dataset: remote, Weight: ds.w, Graph: ds.g})
	}
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	e.spec = spec
	ix, err := dataset.Load(e.fs, "/data/img")
	if err != nil {
		t.Fatal(err)
	}
	spanning := 0
	for i := 0; i < ix.Len(); i++ {
		s := ix.Sample(i)
		if s.GetOffset()/(1<<20) != (s.GetOffset()+s.GetLength()-1)/(1<<20) {
			spanning++
		}
	}
	t.Logf("img: %d samples, %d span a block boundary", ix.Len(), spanning)
	if spanning == 0 {
		t.Error("no sample spans a block boundary: the case is not exercised")
	}

	const steps = 12
	var local [2][]*reader.Step
	for rank := 0; rank < 2; rank++ {
		local[rank] = nextSteps(t, e.open(t, e.su, rank, 0, false), 64)
	}

	t.Run("storage output equals local output byte for byte", func(t *testing.T) {
		for rank := 0; rank < 2; rank++ {
			r := e.open(t, e.su, rank, 0, true)
			paths := sameSteps(t, fmt.Sprintf("rank %d", rank), nextSteps(t, r, steps), local[rank][:steps])
			st := r.Stats()
			t.Logf("rank %d: %v; offloaded fraction %.2f, %d B from nodes, %d B from HDFS", rank, paths, st.OffloadedFraction(), st.BytesFromNodes, st.BytesFromHDFS)
			// The shedding node may shed now and then on a busy machine; the others never do.
			if paths["offload"] < steps*4/2 || paths["local"] > 0 {
				t.Errorf("rank %d: paths %v: want most samples transformed by the DataNodes and none read locally", rank, paths)
			}
		}
		var transformed int64
		for i := range e.nodes {
			transformed += e.status(t, i).GetSamplesTransformed()
		}
		if transformed == 0 {
			t.Error("no DataNode reports a transformed sample")
		}
	})

	t.Run("golden digests via the DataNodes, raw, and the reader", func(t *testing.T) {
		// Every xformgraph golden case as one explicit step; the inputs are stored as
		// "<sample>.<ext>" so that their index key is the golden key.
		cases := golden.Cases()
		gspec := &schedule.Spec{Name: "golden", Seed: 1, GlobalBatch: 1, WorldSize: 1}
		srcOf := map[string]int{}
		if err := e.fs.MkdirAll("/data/golden", 0o755); err != nil {
			t.Fatal(err)
		}
		for _, gc := range cases {
			p := "/data/golden/" + gc.Sample + path.Ext(gc.Sample)
			if _, err := e.fs.Stat(p); err != nil {
				if err := hdfsio.WriteFile(ctx, e.fs, p, gc.Input()); err != nil {
					t.Fatal(err)
				}
			}
			name := fmt.Sprintf("%s-s%d", gc.GraphName, gc.Seed)
			i, ok := srcOf[name]
			if !ok {
				i = len(gspec.Sources)
				srcOf[name] = i
				gspec.Sources = append(gspec.Sources, schedule.Source{Name: name, Dataset: "/data/golden", Weight: 1, Graph: gc.Graph()})
			}
			gspec.Explicit = append(gspec.Explicit, []schedule.ExplicitSample{{Source: i, Key: gc.Key, Epoch: gc.Epoch}})
		}
		idx, err := dataset.Build(ctx, dataset.HDFSFS{Client: e.fs}, "/data/golden", dataset.BuildOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dataset.Store(ctx, e.fs, idx); err != nil {
			t.Fatal(err)
		}
		if err := gspec.Validate(); err != nil {
			t.Fatal(err)
		}
		for _, mode := range []struct {
			name         string
			offload, raw bool
		}{{"datanode", true, false}, {"raw", true, true}, {"local", false, false}} {
			store := &reader.HDFSStore{Client: e.fs}
			defer store.Close()
			cfg := reader.Config{User: e.su, Spec: gspec, Locator: reader.NamespaceLocator{Client: e.ns, User: e.su}, Store: store,
				MaxWait: 30 * time.Second, Dial: extcluster.Dial, ForceRawOnly: mode.raw}
			if mode.offload {
				cfg.Directory = reader.NamespaceDirectory{Client: e.dir, User: e.su}
			}
			r, err := reader.Open(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			paths := map[string]int{}
			for i, st := range nextSteps(t, r, len(cases)) {
				smp := st.Samples[0]
				paths[smp.Path]++
				if smp.Err != nil {
					t.Errorf("%s: case %s: %v", mode.name, cases[i].ID, smp.Err)
					continue
				}
				if err := golden.Check(cases[i].ID, smp.Frames); err != nil {
					t.Errorf("%s: %v", mode.name, err)
				}
			}
			r.Close()
			t.Logf("%s: %d golden cases checked, paths %v", mode.name, len(cases), paths)
			if mode.name == "datanode" && paths["offload"] == 0 {
				t.Errorf("no golden case was transformed by a DataNode: %v", paths)
			}
		}
	})

	t.Run("resumed session reproduces the samples", func(t *testing.T) {
		r := e.open(t, e.su, 1, 25, true)
		sameSteps(t, "resume at 25", nextSteps(t, r, 10), local[1][25:35])
	})

	t.Run("fallback above the CPU threshold and recovery below it", func(t *testing.T) {
		// The governor watches the whole node, so this case needs a node that is not already
		// saturated by processes outside the test (a shared CI machine can be).
		eventually(t, 90*time.Second, "node not shedding before the test loads it", func() error {
			if st := e.status(t, sheddingNode); st.GetShedding() {
				return fmt.Errorf("cpu_other %.2f from processes outside this test: the machine is too busy to show the governor's transitions", st.GetCpuOther())
			}
			return nil
		})
		// Load every core from this process: for the DataNode that is CPU used by others.
		var stop atomic.Bool
		for i := 0; i < runtime.NumCPU()+1; i++ {
			go func() {
				x := 0
				for !stop.Load() {
					x++
				}
			}()
		}
		defer stop.Store(true)
		eventually(t, 30*time.Second, "node sheds under load", func() error {
			if st := e.status(t, sheddingNode); !st.GetShedding() {
				return fmt.Errorf("cpu_other %.2f, not shedding", st.GetCpuOther())
			}
			return nil
		})
		rawBefore := e.status(t, sheddingNode).GetSamplesRaw()
		r := e.open(t, e.su, 0, 0, true)
		paths := sameSteps(t, "shedding", nextSteps(t, r, 8), local[0][:8])
		stop.Store(true)
		rawAfter := e.status(t, sheddingNode).GetSamplesRaw()
		t.Logf("while node %d shed: %v (it answered %d samples raw)", sheddingNode, paths, rawAfter-rawBefore)
		if paths["raw"] == 0 || rawAfter == rawBefore {
			t.Errorf("no raw samples while shedding: %v", paths)
		}
		eventually(t, 90*time.Second, "node stops shedding once the load is gone", func() error {
			if st := e.status(t, sheddingNode); st.GetShedding() {
				return fmt.Errorf("cpu_other %.2f, still shedding", st.GetCpuOther())
			}
			return nil
		})
		nextSteps(t, r, 5) // steps prepared while shedding drain
		paths = sameSteps(t, "recovered", nextSteps(t, r, 10), local[0][13:23])
		t.Logf("after recovery: %v", paths)
		if paths["raw"] > 0 || paths["local"] > 0 {
			t.Errorf("after recovery: %v, want every sample offloaded", paths)
		}
		if tr := e.status(t, sheddingNode).GetShedTransitions(); tr < 2 {
			t.Errorf("shed transitions %d, want >= 2", tr)
		}
	})

	t.Run("permission denied", func(t *testing.T) {
		// A dataset only its owner may read: another user cannot open a reader on it, and a
		// session naming it is refused: the node locates it as that user, and the NameNode
		// says no.
		if err := e.fs.Chmod("/data/img", 0o700); err != nil {
			t.Fatal(err)
		}
		defer e.fs.Chmod("/data/img", 0o755)
		cfg := reader.Config{User: "mallory", Spec: e.spec, Locator: reader.NamespaceLocator{Client: e.ns, User: "mallory"},
			Store: &reader.HDFSStore{Client: mustClient(t, c, "mallory")}, Directory: reader.NamespaceDirectory{Client: e.dir, User: "mallory"}, Dial: extcluster.Dial}
		_, err := reader.Open(ctx, cfg)
		if err == nil || !(errors.Is(err, os.ErrPermission) || status.Code(errors.Unwrap(err)) == codes.PermissionDenied || strings.Contains(err.Error(), "ermission denied")) {
			t.Fatalf("mallory opened a reader on a 0700 dataset: %v", err)
		}
		t.Logf("mallory: %v", err)
		src := e.spec.Sources[0] // a copy: the suite's spec stays as it is
		src.Weight = 1
		img := &schedule.Spec{Name: "x", Seed: 1, GlobalBatch: 2, WorldSize: 1, Sources: []schedule.Source{src}}
		var members []*pb.SessionMember
		for i := range e.nodes {
			members = append(members, &pb.SessionMember{DatanodeUuid: e.status(t, i).GetDatanodeUuid()})
		}
		_, err = e.nodes[0].OpenSession(ctx, &pb.OpenSessionRequest{User: "mallory", Schedule: img.ToProto(), Members: members,
			Sources: []*pb.SessionSource{{IndexSha256: ix.SHA256()}}})
		if status.Code(err) != codes.PermissionDenied || !strings.Contains(err.Error(), "Permission denied: user=mallory") {
			t.Fatalf("session as mallory on a 0700 dataset: %v, want PermissionDenied from the NameNode", err)
		}
		t.Logf("session as mallory: %v", err)
	})

	t.Run("DataNode restart mid-session: fallback, then offload again", func(t *testing.T) {
		r := e.open(t, e.su, 1, 0, true)
		sameSteps(t, "before restart", nextSteps(t, r, 4), local[1][:4])
		changes := r.Stats().MemberChanges
		if err := c.StopDataNode(0); err != nil {
			t.Fatal(err)
		}
		paths := sameSteps(t, "node 0 down", nextSteps(t, r, 8), local[1][4:12])
		t.Logf("DataNode 0 down: %v", paths)
		if paths["local"] == 0 {
			t.Errorf("no sample read locally while DataNode 0 was down: %v", paths)
		}
		if err := c.StartDataNode(ctx, 0); err != nil {
			t.Fatal(err)
		}
		eventually(t, 60*time.Second, "datanode-ext 0 serves again", func() error {
			_, err := e.nodes[0].NodeStatus(ctx, &pb.OffloadNodeStatusRequest{User: e.su})
			return err
		})
		// The reader reopens node 0's session in the background (again every Retry while that
		// fails) and reads its slots from HDFS meanwhile: consume one step at a time until the
		// session is back, then the steps made after it (past the prefetched ones) must all
		// come from the nodes.
		// Node 0 comes back either as a reconnect of its session or, if its registration in
		// namenode-ext's directory expired while it was down, as a new member set.
		back := func() bool {
			st := r.Stats()
			return st.Reconnects > 0 || st.MemberChanges > changes && st.Members == len(e.nodes)
		}
		i := 12
		for deadline := time.Now().Add(45 * time.Second); !back(); i++ {
			if i+8 > len(local[1]) || time.Now().After(deadline) {
				t.Fatalf("node 0's session not reopened after %d steps and %v (stats %+v)", i-12, 45*time.Second, r.Stats())
			}
			sameSteps(t, "node 0 back, before the reconnect", nextSteps(t, r, 1), local[1][i:i+1])
			time.Sleep(500 * time.Millisecond)
		}
		sameSteps(t, "prefetched before the reconnect", nextSteps(t, r, 4), local[1][i:i+4])
		paths2 := sameSteps(t, "node 0 back", nextSteps(t, r, 4), local[1][i+4:i+8])
		t.Logf("DataNode 0 back: %v (reconnects %d, member changes %d, after %d steps)", paths2, r.Stats().Reconnects, r.Stats().MemberChanges, i-12)
		if paths2["local"] > 0 {
			t.Errorf("still reading locally after DataNode 0's session was reopened: %v", paths2)
		}
	})

	t.Run("multi-source weights hold over many steps", func(t *testing.T) {
		r := e.open(t, e.su, 0, 100, true)
		counts := map[int]int{}
		for _, st := range nextSteps(t, r, 40) {
			for _, s := range st.Samples {
				if s.Err != nil {
					t.Fatal(s.Err)
				}
				counts[s.Source]++
			}
		}
		share := float64(counts[0]) / float64(counts[0]+counts[1])
		t.Logf("source shares over 40 steps x 4 samples: img %d vid %d (%.3f, weight 0.75)", counts[0], counts[1], share)
		if share < 0.70 || share > 0.80 {
			t.Errorf("image share %.3f, want 0.75 +- 0.05", share)
		}
	})

	// Last: it leaves DataNode 0 running as another build.
	t.Run("determinism domain mismatch: the reader makes every sample itself and says so", func(t *testing.T) {
		// DataNode 0 restarts as another build (the test-only key makes its datanode-ext report
		// and stamp another FFmpeg release) while a reader runs; then a new reader opens.
		r := e.open(t, e.su, 0, 30, true)
		before := sameSteps(t, "before", nextSteps(t, r, 3), local[0][30:33])
		if before["offload"] == 0 || r.Stats().RawOnly {
			t.Fatalf("before the restart: %v, raw-only %v", before, r.Stats().RawOnly)
		}
		other := xformgraph.Domain()
		other.FFmpeg = "0.0-conformance"
		foreign := other.String()
		if err := c.StopDataNode(0); err != nil {
			t.Fatal(err)
		}
		setSiteKey(t, filepath.Join(c.DataNodes()[0].ConfDir, "hdfs-site.xml"), offload.TestDomainKey, foreign)
		if err := c.StartDataNode(ctx, 0); err != nil {
			t.Fatal(err)
		}
		eventually(t, 60*time.Second, "datanode-ext 0 serves as the other build", func() error {
			st, err := e.nodes[0].NodeStatus(ctx, &pb.OffloadNodeStatusRequest{User: e.su})
			if err != nil {
				return err
			}
			if st.GetDeterminismDomain() != foreign {
				return fmt.Errorf("domain %q", st.GetDeterminismDomain())
			}
			return nil
		})
		// The running reader reconnects to node 0 in the background, learns its domain from
		// the session's answer and goes raw-only.
		i := 33
		for deadline := time.Now().Add(30 * time.Second); !r.Stats().RawOnly; i++ {
			if i+10 > len(local[0]) || time.Now().After(deadline) {
				t.Fatalf("the reader did not go raw-only within %d steps and %v", i-33, 30*time.Second)
			}
			sameSteps(t, "node 0 back as another build, before the reconnect", nextSteps(t, r, 1), local[0][i:i+1])
			time.Sleep(500 * time.Millisecond)
		}
		sameSteps(t, "prefetched before the switch", nextSteps(t, r, 4), local[0][i:i+4])
		after := sameSteps(t, "after the switch", nextSteps(t, r, 6), local[0][i+4:i+10])
		st := r.Stats()
		t.Logf("running reader: before %v, after %v; raw-only: %s", before, after, st.RawOnlyReason)
		if after["offload"] > 0 {
			t.Errorf("tensors used after the reader went raw-only: %v", after)
		}
		if !strings.Contains(st.RawOnlyReason, "0.0-conformance") {
			t.Errorf("raw-only reason %q does not name node 0's domain", st.RawOnlyReason)
		}
		// A reader opened now is raw-only from the start: every node sends raw bytes.
		r2 := e.open(t, e.su, 1, 0, true)
		p2 := sameSteps(t, "new reader", nextSteps(t, r2, 8), local[1][:8])
		st2 := r2.Stats()
		t.Logf("new reader: %v; raw-only %v: %s", p2, st2.RawOnly, st2.RawOnlyReason)
		if p2["offload"] > 0 || p2["raw"] == 0 || !st2.RawOnly || !strings.Contains(st2.RawOnlyReason, lay.DataNodeAPI[0]) {
			t.Errorf("new reader: paths %v, raw-only %v %q; want raw bytes only and node 0 named", p2, st2.RawOnly, st2.RawOnlyReason)
		}
		// The node says so on its /metrics.
		fams, err := doctor.Scrape(ctx, http.DefaultClient, lay.DataNodeMetrics[0])
		if err != nil {
			t.Fatal(err)
		}
		if v := fams["newtricks_offload_sessions_domain_mismatch_total"]; len(v) != 1 || v[0] < 1 {
			t.Errorf("node 0 newtricks_offload_sessions_domain_mismatch_total = %v, want >= 1", v)
		}
	})
}

// setSiteKey sets one property in a Hadoop site file (a daemon reads it when it starts).
func setSiteKey(t *testing.T, file, key, value string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var conf struct {
		Properties []struct {
			Name  string `xml:"name"`
			Value string `xml:"value"`
		} `xml:"property"`
	}
	if err := xml.Unmarshal(b, &conf); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	props := map[string]string{key: value}
	for _, p := range conf.Properties {
		if p.Name != key {
			props[p.Name] = p.Value
		}
	}
	if err := os.WriteFile(file, cluster.SiteXML(props), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustClient(t *testing.T, c *cluster.Cluster, user string) *hdfs.Client {
	cl, err := c.Client(user)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}
