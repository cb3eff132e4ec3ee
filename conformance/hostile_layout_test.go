package conformance

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/colinmarc/hdfs/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/newtricks/newtricks/cmd/newtricks/doctor"
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
)

// Issue 25 items 1 and 2, hostile callers, against a real cluster under simple
// authentication, as the ordinary users alice and bob:
//
//   - (a) a session cannot carry a layout of the caller's making: the fields through which
//     the old OpenSession took lengths and blocks from the caller (a sample declared at 2^62
//     bytes used to kill datanode-ext) no longer exist, and an index declaring more than the
//     real file holds is refused by the node's own look-up;
//   - (b) no address a caller names is dialed, and what a session answers is the same whether
//     such an address is an open or a closed port;
//   - (c) a dataset the caller may not read is refused by the NameNode, through the node's
//     own Locate as the caller, while the caller's session on her own dataset goes on.
//
// Throughout, every datanode-ext keeps its pid and its memory stays within layoutRSSGrowth.

// layoutRSSGrowth bounds each datanode-ext's peak resident memory (VmHWM) over the hostile
// calls above what it was before them: a node that sized a buffer from the request would
// pass it (or die).
const layoutRSSGrowth = 64 << 20

// legacyFields adds to an OpenSessionRequest, as raw wire bytes, what the old request carried
// and the node trusted: per source the index's and the files' block maps (SessionSource fields
// 2 and 3), per member an API address (SessionMember field 2). Those fields are reserved now;
// a current node receives them as unknown fields, an old one as data.
func legacyFields(t *testing.T, req *pb.OpenSessionRequest, index []*pb.LocatedBlocks, files [][]*pb.LocatedBlocks, memberAddrs []string) {
	t.Helper()
	for i, src := range req.Sources {
		var raw []byte
		b, err := proto.Marshal(index[i])
		if err != nil {
			t.Fatal(err)
		}
		raw = protowire.AppendBytes(protowire.AppendTag(raw, 2, protowire.BytesType), b)
		for _, f := range files[i] {
			b, err := proto.Marshal(f)
			if err != nil {
				t.Fatal(err)
			}
			raw = protowire.AppendBytes(protowire.AppendTag(raw, 3, protowire.BytesType), b)
		}
		src.ProtoReflect().SetUnknown(raw)
	}
	for i, m := range req.Members {
		m.ProtoReflect().SetUnknown(protowire.AppendString(protowire.AppendTag(nil, 2, protowire.BytesType), memberAddrs[i]))
	}
}

// procStatus reads VmRSS and VmHWM (bytes) of a process.
func procStatus(pid int) (rss, hwm int64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || (k != "VmRSS" && k != "VmHWM") {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			return 0, 0, err
		}
		if k == "VmRSS" {
			rss = n << 10
		} else {
			hwm = n << 10
		}
	}
	return rss, hwm, sc.Err()
}

// uploadOwned copies a local dataset directory into HDFS as the client's user, every file
// with one replica (so that a DataNode holding none of a dataset exists, and a session there
// reads every byte from its peers).
func uploadOwned(ctx context.Context, fs *hdfs.Client, local, remote string) error {
	return filepath.Walk(local, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(local, p)
		dst := path.Join(remote, filepath.ToSlash(rel))
		if info.IsDir() {
			return fs.MkdirAll(dst, 0o755)
		}
		src, err := os.Open(p)
		if err != nil {
			return err
		}
		defer src.Close()
		w, err := fs.CreateFile(dst, 1, 1<<20, 0o644)
		if err != nil {
			return err
		}
		if _, err := io.Copy(w, src); err != nil {
			w.Close()
			return err
		}
		return hdfsio.CloseFile(ctx, w)
	})
}

func hostileGraph() *xformv1.Graph {
	return &xformv1.Graph{Version: 1, Seed: 5, Nodes: []*xformv1.Node{
		xformgraph.NewNodeSpec("dec", "decode_image", "input", nil),
		xformgraph.NewNodeSpec("rrc", "random_resized_crop", "dec", map[string]any{"size": []any{32}}),
		xformgraph.NewNodeSpec("t", "to_tensor", "rrc", map[string]any{"layout": "CHW", "dtype": "uint8"}),
	}, Outputs: []string{"t"}}
}

// countingListener accepts and closes connections, counting them: an address of the test's.
type countingListener struct {
	net.Listener
	accepted atomic.Int64
}

func listenCounting(t *testing.T) *countingListener {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &countingListener{Listener: lis}
	go func() {
		for {
			conn, err := lis.Accept()
			if err != nil {
				return
			}
			c.accepted.Add(1)
			conn.Close()
		}
	}()
	t.Cleanup(func() { lis.Close() })
	return c
}

func TestHostileLayout(t *testing.T) {
	a := artifacts(t)
	m, err := datasets.LoadMedia(os.Getenv("NEWTRICKS_XFORM_MEDIA"))
	if err != nil {
		t.Fatal(err)
	}
	c, lay := startCluster(t, a, extcluster.Options{Name: "hostile", DataNodes: 3,
		// One replica of everything (the CLI's index too): some DataNode then holds none of a
		// dataset, and a session there reads every byte from its peers.
		HDFSSite: map[string]string{"dfs.blocksize": "1048576", "dfs.replication": "1"},
		// No shedding: the bytes of a session do not depend on the machine's load.
		DataNodeSite: func(int) map[string]string {
			return map[string]string{"newtricks.datanode.ext.offload.cpu.high": "1", "newtricks.datanode.ext.offload.cpu.low": "1"}
		}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	su := superuser(t)
	root := mustClient(t, c, su)
	for _, u := range []string{"alice", "bob"} {
		home := "/user/" + u
		if err := root.MkdirAll(home, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := root.Chown(home, u, u); err != nil {
			t.Fatal(err)
		}
	}
	alice, bob := mustClient(t, c, "alice"), mustClient(t, c, "bob")
	// alice's and bob's datasets; bob's home is his alone.
	base := t.TempDir()
	for _, o := range []struct {
		user string
		fs   *hdfs.Client
	}{{"alice", alice}, {"bob", bob}} {
		local := filepath.Join(base, o.user)
		if _, err := datasets.Write(local, datasets.Media{Images: m.Images}, datasets.Layout{Shards: 2, PerShard: 20, Singles: 2}); err != nil {
			t.Fatal(err)
		}
		remote := "/user/" + o.user + "/ds"
		if err := uploadOwned(ctx, o.fs, local, remote); err != nil {
			t.Fatal(err)
		}
		out, err := exec.CommandContext(ctx, a.NewtricksCLI, "dataset", "index", "--namenode", c.NameNodeAddr(), "--user", o.user, remote).CombinedOutput()
		if err != nil {
			t.Fatalf("newtricks dataset index %s: %v\n%s", remote, err, out)
		}
	}
	if err := bob.Chmod("/user/bob", 0o700); err != nil {
		t.Fatal(err)
	}
	// alice's crafted dataset: a 100-byte file and an index she wrote herself declaring it, and
	// its one sample, 2^62 bytes long (a valid index on its own: the sample lies inside the
	// declared length).
	const evil = "/user/alice/evil"
	if err := alice.MkdirAll(evil, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := hdfsio.WriteFile(ctx, alice, evil+"/f.jpg", make([]byte, 100)); err != nil {
		t.Fatal(err)
	}
	crafted := &pb.DatasetIndex{Version: dataset.Version, Root: evil,
		Files: []*pb.DatasetFile{{Path: "f.jpg", Length: 1 << 62}},
		Samples: []*pb.DatasetSample{{Key: "f", File: 0, Offset: 0, Length: 1 << 62, Media: pb.DatasetMedia_DATASET_MEDIA_JPEG, Cost: 1,
			Members: []*pb.DatasetMember{{Name: "jpg", Offset: 0, Length: 1 << 62, Media: pb.DatasetMedia_DATASET_MEDIA_JPEG}}}}}
	evilIdx, err := dataset.FromProto(crafted)
	if err != nil {
		t.Fatalf("the crafted index is not even valid on its own: %v", err)
	}
	b, err := dataset.Marshal(crafted)
	if err != nil {
		t.Fatal(err)
	}
	if err := hdfsio.WriteFile(ctx, alice, path.Join(evil, dataset.IndexName), b); err != nil {
		t.Fatal(err)
	}
	aliceIdx, err := dataset.Load(alice, "/user/alice/ds")
	if err != nil {
		t.Fatal(err)
	}

	ns, nsConn, err := extcluster.NamespaceClient(lay)
	if err != nil {
		t.Fatal(err)
	}
	defer nsConn.Close()
	// The datanode-ext nodes, dialed here only to talk to them as a caller would.
	var nodes []pb.OffloadClient
	var uuids []string
	for i, addr := range lay.DataNodeAPI {
		cc, err := extcluster.Dial(addr)
		if err != nil {
			t.Fatal(err)
		}
		defer cc.Close()
		oc := pb.NewOffloadClient(cc)
		var st *pb.OffloadNodeStatus
		if err := extcluster.WaitServing(ctx, func(ctx context.Context) (err error) {
			st, err = oc.NodeStatus(ctx, &pb.OffloadNodeStatusRequest{User: "alice"})
			return err
		}); err != nil {
			t.Fatalf("datanode-ext %d: %v", i, err)
		}
		nodes = append(nodes, oc)
		uuids = append(uuids, st.GetDatanodeUuid())
	}
	// The nodes find one another in namenode-ext's directory: wait until each registered.
	if err := extcluster.WaitDirectory(ctx, nsConn, "alice", len(nodes)); err != nil {
		t.Fatal(err)
	}
	members := func() []*pb.SessionMember {
		var out []*pb.SessionMember
		for _, u := range uuids {
			out = append(out, &pb.SessionMember{DatanodeUuid: u})
		}
		return out
	}
	pids := make([]int, len(nodes))
	hwm0 := make([]int64, len(nodes))
	for i := range nodes {
		ps, err := c.Children(cluster.DataNode(i), "datanode-ext")
		if err != nil || len(ps) != 1 {
			t.Fatalf("datanode-ext of DataNode %d: %v %v", i, ps, err)
		}
		pids[i] = ps[0]
		if _, hwm0[i], err = procStatus(pids[i]); err != nil {
			t.Fatal(err)
		}
	}
	// checkNodes: every datanode-ext still the same process, answering, its peak memory within
	// the bound.
	checkNodes := func(t *testing.T) {
		t.Helper()
		for i := range nodes {
			ps, err := c.Children(cluster.DataNode(i), "datanode-ext")
			if err != nil || len(ps) != 1 || ps[0] != pids[i] {
				t.Errorf("datanode-ext of DataNode %d: pids %v (%v), was %d: it died", i, ps, err, pids[i])
				continue
			}
			rss, hwm, err := procStatus(pids[i])
			if err != nil {
				t.Error(err)
				continue
			}
			t.Logf("datanode-ext %d (pid %d): VmRSS %d MiB, VmHWM %d MiB (was %d MiB)", i, pids[i], rss>>20, hwm>>20, hwm0[i]>>20)
			if hwm-hwm0[i] > layoutRSSGrowth {
				t.Errorf("datanode-ext %d: peak RSS grew by %d MiB, bound %d MiB", i, (hwm-hwm0[i])>>20, layoutRSSGrowth>>20)
			}
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			_, err = nodes[i].NodeStatus(cctx, &pb.OffloadNodeStatusRequest{User: "alice"})
			cancel()
			if err != nil {
				t.Errorf("datanode-ext %d does not answer: %v", i, err)
			}
		}
	}
	// serving waits until every datanode-ext answers (one a previous case killed comes back:
	// the hook restarts it).
	serving := func(t *testing.T) {
		t.Helper()
		for i, n := range nodes {
			if err := extcluster.WaitServing(ctx, func(ctx context.Context) error {
				_, err := n.NodeStatus(ctx, &pb.OffloadNodeStatusRequest{User: "alice"})
				return err
			}); err != nil {
				t.Fatalf("datanode-ext %d: %v", i, err)
			}
		}
	}
	locate := func(t *testing.T, p string) *pb.LocatedBlocks {
		t.Helper()
		lb, err := ns.Locate(ctx, &pb.LocateRequest{Path: p, User: "alice"})
		if err != nil {
			t.Fatal(err)
		}
		return lb
	}

	t.Run("a: a layout of the caller's making cannot be expressed, and a lying index is refused", func(t *testing.T) {
		spec := &schedule.Spec{Name: "evil", Seed: 1, GlobalBatch: 1, WorldSize: 1,
			Sources: []schedule.Source{{Name: "evil", Dataset: evil, Weight: 1, Graph: hostileGraph()}}}
		if err := spec.Validate(); err != nil {
			t.Fatal(err)
		}
		// What the old API let alice declare: the files' block maps, her real index and the
		// real block of f.jpg, both said to hold 2^62 bytes.
		fileLB := locate(t, evil+"/f.jpg")
		fileLB.FileLength = 1 << 62
		fileLB.Blocks[0].NumBytes = 1 << 62
		for i := range nodes {
			req := &pb.OpenSessionRequest{User: "alice", Schedule: spec.ToProto(), Members: members(), RawOnly: true,
				DeterminismDomain: xformgraph.Domain().String(), Sources: []*pb.SessionSource{{IndexSha256: evilIdx.SHA256()}}}
			legacyFields(t, req, []*pb.LocatedBlocks{locate(t, path.Join(evil, dataset.IndexName))}, [][]*pb.LocatedBlocks{{fileLB}}, lay.DataNodeAPI)
			resp, err := nodes[i].OpenSession(ctx, req)
			t.Logf("node %d: OpenSession with a 2^62-byte layout: %v", i, err)
			if err == nil {
				t.Errorf("node %d opened a session on a layout the caller declared", i)
				// What the old node did next: read the sample at its declared length.
				if st, err := nodes[i].GetStep(ctx, &pb.GetStepRequest{User: "alice", SessionId: resp.GetSessionId(), Slots: []uint32{0}}); err == nil {
					for {
						if _, err := st.Recv(); err != nil {
							t.Logf("node %d: GetStep: %v", i, err)
							break
						}
					}
				}
				continue
			}
			// The node located f.jpg itself: 100 bytes, not what the index says.
			if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "f.jpg has 100 bytes, the index says 4611686018427387904") {
				t.Errorf("node %d: %v, want FailedPrecondition: f.jpg has 100 bytes (stale index)", i, err)
			}
		}
		time.Sleep(time.Second) // a worker that took the sample would have run by now
		checkNodes(t)
	})

	t.Run("b: no address from a request is dialed; open and closed ports answer alike", func(t *testing.T) {
		serving(t)
		// A node that holds no block of alice's index: everything it reads comes from peers.
		ixLB := locate(t, path.Join("/user/alice/ds", dataset.IndexName))
		x := -1
		for i, u := range uuids {
			held := false
			for _, l := range ixLB.GetBlocks()[0].GetLocations() {
				held = held || l.GetUuid() == u
			}
			if !held {
				x = i
				break
			}
		}
		if x < 0 {
			t.Fatal("every DataNode holds alice's index: the case cannot force reads from peers")
		}
		var files []*pb.LocatedBlocks
		for i := range aliceIdx.Files() {
			files = append(files, locate(t, aliceIdx.FilePath(i)))
		}
		spec := &schedule.Spec{Name: "peers", Seed: 3, GlobalBatch: 4, WorldSize: 1, MaxSteps: 10,
			Sources: []schedule.Source{{Name: "img", Dataset: "/user/alice/ds", Weight: 1, Graph: hostileGraph()}}}
		if err := spec.Validate(); err != nil {
			t.Fatal(err)
		}
		open := listenCounting(t)
		closedLis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		closed := closedLis.Addr().String()
		closedLis.Close()
		sid := regexp.MustCompile(`[0-9a-f]{32}`)
		run := func(addr string) string {
			req := &pb.OpenSessionRequest{User: "alice", Schedule: spec.ToProto(), Members: members(), RawOnly: true,
				DeterminismDomain: xformgraph.Domain().String(), Sources: []*pb.SessionSource{{IndexSha256: aliceIdx.SHA256()}}}
			legacyFields(t, req, []*pb.LocatedBlocks{ixLB}, [][]*pb.LocatedBlocks{files}, []string{addr, addr, addr})
			var out strings.Builder
			resp, err := nodes[x].OpenSession(ctx, req)
			fmt.Fprintf(&out, "open: %v %s\n", status.Code(err), sid.ReplaceAllString(status.Convert(err).Message(), "ID"))
			if err != nil {
				return out.String()
			}
			defer nodes[x].CloseSession(ctx, &pb.CloseSessionRequest{User: "alice", SessionId: resp.GetSessionId()})
			for step := uint64(0); step < 3; step++ {
				st, err := nodes[x].GetStep(ctx, &pb.GetStepRequest{User: "alice", SessionId: resp.GetSessionId(), Step: step,
					Slots: []uint32{0, 1, 2, 3}, MaxWaitMs: 20000})
				if err != nil {
					fmt.Fprintf(&out, "step %d: %v\n", step, status.Code(err))
					continue
				}
				got := map[uint32]string{}
				for {
					s, err := st.Recv()
					if err != nil {
						if !errors.Is(err, io.EOF) {
							fmt.Fprintf(&out, "step %d: stream %v %s\n", step, status.Code(err), status.Convert(err).Message())
						}
						break
					}
					got[s.GetSlot()] = fmt.Sprintf("%s code %d %q %d bytes", s.GetKey(), s.GetErrorCode(), s.GetError(), len(s.GetFrames()))
				}
				for k := uint32(0); k < 4; k++ {
					fmt.Fprintf(&out, "step %d slot %d: %s\n", step, k, got[k])
				}
			}
			return out.String()
		}
		peerReads := func() float64 {
			fams, err := doctor.Scrape(ctx, http.DefaultClient, lay.DataNodeMetrics[x])
			if err != nil {
				t.Errorf("node %d's metrics: %v", x, err)
				return 0
			}
			n := 0.0
			for _, v := range fams["newtricks_offload_peer_reads_total"] {
				n += v
			}
			return n
		}
		readsBefore := peerReads()
		withOpen, withClosed := run(open.Addr().String()), run(closed)
		if n := peerReads() - readsBefore; n == 0 {
			t.Errorf("node %d read nothing from its peers: the case did not exercise them", x)
		} else {
			t.Logf("node %d read %v pieces from its peers at the directory's addresses", x, n)
		}
		t.Logf("node %d, members named at an open port:\n%s", x, withOpen)
		if n := open.accepted.Load(); n != 0 {
			t.Errorf("the test's listener was dialed %d times from the DataNode host", n)
		}
		if withOpen != withClosed {
			t.Errorf("an open and a closed port give different answers:\nopen:\n%s\nclosed:\n%s", withOpen, withClosed)
		}
		for _, addr := range []string{open.Addr().String(), closed} {
			_, port, _ := net.SplitHostPort(addr)
			if strings.Contains(withOpen+withClosed, ":"+port) {
				t.Errorf("an answer names the caller's address %s", addr)
			}
		}
		// Read from the peers namenode-ext lists, every sample comes, whole.
		if !strings.HasPrefix(withOpen, "open: OK") || regexp.MustCompile(`(?m)code [1-9]| 0 bytes|: $|stream`).MatchString(withOpen) {
			t.Errorf("the session on alice's own dataset did not serve every sample:\n%s", withOpen)
		}
		checkNodes(t)
	})

	t.Run("c: another user's dataset is refused by the NameNode; alice's own session goes on", func(t *testing.T) {
		serving(t)
		// alice's reader knows only namenode-ext (its directory lists the nodes).
		dirErr := extcluster.WaitDirectory(ctx, nsConn, "alice", len(nodes))
		if dirErr != nil {
			t.Errorf("no directory of the DataNodes for alice's reader: %v", dirErr)
		}
		spec := &schedule.Spec{Name: "alice", Seed: 9, GlobalBatch: 4, WorldSize: 1, MaxSteps: 12,
			Sources: []schedule.Source{{Name: "img", Dataset: "/user/alice/ds", Weight: 1, Graph: hostileGraph()}}}
		if err := spec.Validate(); err != nil {
			t.Fatal(err)
		}
		openReader := func(offload bool) *reader.Reader {
			store := &reader.HDFSStore{Client: alice}
			cfg := reader.Config{User: "alice", Spec: spec, Locator: reader.NamespaceLocator{Client: ns, User: "alice"}, Store: store,
				MaxWait: 20 * time.Second, Retry: 500 * time.Millisecond, Dial: extcluster.Dial}
			if offload {
				cfg.Directory = reader.NamespaceDirectory{Client: pb.NewDataNodeDirectoryClient(nsConn), User: "alice"}
			}
			r, err := reader.Open(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { r.Close() })
			return r
		}
		local := nextSteps(t, openReader(false), 12)
		var r *reader.Reader
		var before map[string]int
		if dirErr == nil {
			r = openReader(true)
			before = sameSteps(t, "before", nextSteps(t, r, 4), local[:4])
		}

		bobSpec := &schedule.Spec{Name: "bob", Seed: 1, GlobalBatch: 4, WorldSize: 1,
			Sources: []schedule.Source{{Name: "img", Dataset: "/user/bob/ds", Weight: 1, Graph: hostileGraph()}}}
		if err := bobSpec.Validate(); err != nil {
			t.Fatal(err)
		}
		for i := range nodes {
			_, err := nodes[i].OpenSession(ctx, &pb.OpenSessionRequest{User: "alice", Schedule: bobSpec.ToProto(), Members: members(),
				DeterminismDomain: xformgraph.Domain().String(), Sources: []*pb.SessionSource{{IndexSha256: make([]byte, 32)}}})
			t.Logf("node %d: alice's session on bob's dataset: %v", i, err)
			if status.Code(err) != codes.PermissionDenied || !strings.Contains(err.Error(), "Permission denied: user=alice") ||
				!strings.Contains(err.Error(), "/user/bob") {
				t.Errorf("node %d: %v, want the NameNode's PERMISSION_DENIED for alice on /user/bob", i, err)
			}
		}
		if r == nil {
			checkNodes(t)
			return
		}
		after := sameSteps(t, "after", nextSteps(t, r, 8), local[4:12])
		st := r.Stats()
		t.Logf("alice's reader: before %v, after %v; members %d, reconnects %d", before, after, st.Members, st.Reconnects)
		if before["local"]+after["local"] > 0 || st.Reconnects != 0 || st.Members != len(nodes) {
			t.Errorf("alice's session was disturbed: paths %v %v, members %d, reconnects %d", before, after, st.Members, st.Reconnects)
		}
		checkNodes(t)
	})
}
