package reader_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/newtricks/newtricks/datanode-ext/governor"
	"github.com/newtricks/newtricks/datanode-ext/offload"
	"github.com/newtricks/newtricks/datanode-ext/replica"
	"github.com/newtricks/newtricks/dataset"
	"github.com/newtricks/newtricks/harness/datasets"
	"github.com/newtricks/newtricks/internal/authn"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
	xformv1 "github.com/newtricks/newtricks/proto/gen/xformv1"
	"github.com/newtricks/newtricks/reader"
	"github.com/newtricks/newtricks/schedule"
	"github.com/newtricks/newtricks/xformgraph"
	"github.com/newtricks/newtricks/xformgraph/golden"
)

// fakeHDFS stands in for HDFS in-process: local dataset directories under the HDFS paths,
// files cut into small blocks placed on two of the nodes, a replica file per block, and
// "tokens" that name the user they were issued to (the fake DataNode checks them like the
// real one: a token for another user is refused).
type fakeHDFS struct {
	local     map[string]string // HDFS dataset dir -> local dir
	blockSize int64
	nodes     []string // UUIDs
	repDir    string
	denied    map[string]bool // HDFS paths the user may not read
	// deniedUsers may read nothing (the "NameNode" refuses them).
	deniedUsers map[string]bool
	queueMax    int64 // nodes' queue.max.bytes (0: default)
	// dir is namenode-ext's directory: every node started lists itself there.
	dir *fakeDirectory

	mu     sync.Mutex
	blocks map[string]*pb.LocatedBlocks
	nextID int64
	paths  map[int64]string
}

func (f *fakeHDFS) localPath(p string) string {
	for h, l := range f.local {
		if strings.HasPrefix(p, h+"/") {
			return filepath.Join(l, filepath.FromSlash(strings.TrimPrefix(p, h+"/")))
		}
	}
	return ""
}

func (f *fakeHDFS) locate(p, user string) (*pb.LocatedBlocks, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.denied[p] || f.deniedUsers[user] {
		return nil, status.Errorf(codes.PermissionDenied, "Permission denied: user=%s, access=READ, inode=%s", user, p)
	}
	if lb, ok := f.blocks[p]; ok {
		return withToken(lb, user), nil
	}
	data, err := os.ReadFile(f.localPath(p))
	if err != nil {
		return nil, status.Error(codes.NotFound, err.Error())
	}
	lb := &pb.LocatedBlocks{FileLength: int64(len(data))}
	for off := int64(0); off < int64(len(data)); off += f.blockSize {
		n := min(f.blockSize, int64(len(data))-off)
		f.nextID++
		id := f.nextID
		rp := filepath.Join(f.repDir, fmt.Sprintf("blk_%d", id))
		if err := os.WriteFile(rp, data[off:off+n], 0o600); err != nil {
			return nil, err
		}
		// The checksum file the DataNode keeps beside it: datanode-ext verifies every read.
		if err := os.WriteFile(rp+".meta", replica.Meta(data[off:off+n], replica.TypeCRC32C, 512), 0o600); err != nil {
			return nil, err
		}
		f.paths[id] = rp
		a, b := int(id)%len(f.nodes), (int(id)+1)%len(f.nodes)
		lb.Blocks = append(lb.Blocks, &pb.LocatedBlock{BlockPoolId: "BP-1", BlockId: id, NumBytes: n, Offset: off,
			Locations: []*pb.DatanodeRef{{Uuid: f.nodes[a]}, {Uuid: f.nodes[b]}}})
	}
	f.blocks[p] = lb
	return withToken(lb, user), nil
}

func withToken(lb *pb.LocatedBlocks, user string) *pb.LocatedBlocks {
	out := &pb.LocatedBlocks{FileLength: lb.FileLength}
	for _, b := range lb.Blocks {
		c := proto.Clone(b).(*pb.LocatedBlock)
		c.Token = &pb.Token{Identifier: []byte("user=" + user), Password: []byte("x")}
		out.Blocks = append(out.Blocks, c)
	}
	return out
}

// host is one fake DataNode's token-checked replica access.
type host struct {
	f    *fakeHDFS
	uuid string
}

func (h host) Resolve(_ context.Context, user string, b *pb.LocatedBlock) (offload.Replica, error) {
	if string(b.GetToken().GetIdentifier()) != "user="+user {
		return offload.Replica{}, fmt.Errorf("%w: block token not valid for %s", offload.ErrPermission, user)
	}
	held := false
	for _, l := range b.GetLocations() {
		held = held || l.GetUuid() == h.uuid
	}
	h.f.mu.Lock()
	p, ok := h.f.paths[b.GetBlockId()]
	h.f.mu.Unlock()
	if !ok || !held {
		return offload.Replica{}, fmt.Errorf("%w: no replica of block %d here", offload.ErrUnavailable, b.GetBlockId())
	}
	return offload.Replica{Path: p, MetaPath: p + ".meta", NumBytes: b.GetNumBytes(), Finalized: true}, nil
}

func (h host) ReportBadBlock(context.Context, *pb.LocatedBlock, int64, string) error {
	return errors.New("the fake DataNode has no corrupt replicas to report")
}

// nodeNS is what a node's namenode-ext answers: the files' blocks with tokens for the
// session's user, as the fake NameNode sees them.
type nodeNS struct{ f *fakeHDFS }

func (n nodeNS) Locate(_ context.Context, user string, paths []string) ([]*pb.LocatedBlocks, error) {
	var out []*pb.LocatedBlocks
	for _, p := range paths {
		lb, err := n.f.locate(p, user)
		if err != nil {
			return nil, err
		}
		out = append(out, lb)
	}
	return out, nil
}

// fakeDirectory is namenode-ext's DataNodeDirectory in-process: started nodes list
// themselves; the reader lists it (Endpoints), the nodes look their peers up in it (Lookup).
type fakeDirectory struct {
	mu    sync.Mutex
	addrs map[string]string // UUID -> address
	lists atomic.Int64
}

func (d *fakeDirectory) set(uuid, addr string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if addr == "" {
		delete(d.addrs, uuid)
	} else {
		d.addrs[uuid] = addr
	}
}

func (d *fakeDirectory) Endpoints(context.Context) ([]reader.Endpoint, error) {
	d.lists.Add(1)
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []reader.Endpoint
	for u, a := range d.addrs {
		out = append(out, reader.Endpoint{UUID: u, Addr: a})
	}
	return out, nil
}

func (d *fakeDirectory) Lookup(_ context.Context, uuid string) (offload.Endpoint, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	a, ok := d.addrs[uuid]
	return offload.Endpoint{UUID: uuid, Addr: a}, ok
}

type locator struct {
	f    *fakeHDFS
	user string
}

func (l locator) Locate(_ context.Context, p string) (*pb.LocatedBlocks, error) {
	return l.f.locate(p, l.user)
}

type store struct{ f *fakeHDFS }

func (s store) ReadAt(_ context.Context, p string, off, n int64) ([]byte, error) {
	if s.f.denied[p] {
		return nil, os.ErrPermission
	}
	fh, err := os.Open(s.f.localPath(p))
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	b := make([]byte, n)
	_, err = fh.ReadAt(b, off)
	return b, err
}

func (s store) Size(_ context.Context, p string) (int64, error) {
	st, err := os.Stat(s.f.localPath(p))
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// adminImp says "hdfs" is the only administrator.
type adminImp struct{}

func (adminImp) AuthorizeProxy(context.Context, string, string, string) error {
	return errors.New("no proxy users")
}
func (adminImp) IsAdmin(_ context.Context, u string) (bool, error) { return u == "hdfs", nil }

type fakeNode struct {
	cpu  governor.Sample // cumulative, for shed
	addr string
	gov  *governor.Governor
	srv  *grpc.Server
	lis  net.Listener
	stop context.CancelFunc
	sv   *offload.Server
}

func startNode(t *testing.T, f *fakeHDFS, uuid, addr string) *fakeNode {
	t.Helper()
	return startNodeWith(t, f, uuid, addr, nodeOpts{})
}

// nodeOpts play a node built differently: domain is the determinism domain it reports and
// stamps in its frames; claimReaderDomain makes its NodeStatus and OpenSession answers claim
// the reader's domain anyway (a node that lies, or changed between answer and frames).
type nodeOpts struct {
	domain            string
	claimReaderDomain bool
	// older: the node does not implement GetStepBatch (a datanode-ext from before it).
	older bool
	// msgs, when set, counts the sample messages the node sends (GetStep and GetStepBatch).
	msgs *atomic.Int64
}

// olderServer is a datanode-ext from before GetStepBatch.
type olderServer struct{ *offload.Server }

func (olderServer) GetStepBatch(*pb.GetStepRequest, grpc.ServerStreamingServer[pb.OffloadSampleBatch]) error {
	return status.Error(codes.Unimplemented, "unknown method GetStepBatch for service newtricks.v1.Offload")
}

type countingStream struct {
	grpc.ServerStream
	n *atomic.Int64
}

func (s countingStream) SendMsg(m any) error { s.n.Add(1); return s.ServerStream.SendMsg(m) }

func startNodeWith(t *testing.T, f *fakeHDFS, uuid, addr string, o nodeOpts) *fakeNode {
	t.Helper()
	gov, err := governor.New(governor.Config{High: 0.5, Low: 0.4}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	mgr, err := offload.NewManager(offload.Config{Workers: 1, Lookahead: 3, QueueMaxBytes: f.queueMax}, offload.Options{
		Host: host{f, uuid}, Peers: offload.NewGRPCPeers(), Namespace: nodeNS{f}, Directory: f.dir, Gov: gov,
		Self: func() string { return uuid }, Domain: o.domain})
	if err != nil {
		t.Fatal(err)
	}
	mgr.Run(ctx)
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	opts := authn.ServerOptions(authn.Simple{Imp: adminImp{}})
	if o.claimReaderDomain {
		mine := xformgraph.Domain().String()
		opts = append(opts, grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			resp, err := h(ctx, req)
			switch r := resp.(type) {
			case *pb.OffloadNodeStatus:
				r.DeterminismDomain = mine
			case *pb.OpenSessionResponse:
				r.DeterminismDomain, r.DomainMatch = mine, true
			}
			return resp, err
		}))
	}
	if o.msgs != nil {
		opts = append(opts, grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			return h(srv, countingStream{ss, o.msgs})
		}))
	}
	srv := grpc.NewServer(opts...)
	sv := &offload.Server{Sessions: mgr, Gov: gov, Version: "test", Self: func() (string, string) { return uuid, "x:1" }}
	if o.older {
		pb.RegisterOffloadServer(srv, olderServer{sv})
	} else {
		sv.Register(srv)
	}
	go srv.Serve(lis)
	n := &fakeNode{addr: lis.Addr().String(), gov: gov, srv: srv, lis: lis, stop: cancel, sv: sv}
	f.dir.set(uuid, n.addr)
	t.Cleanup(n.close)
	return n
}

func (n *fakeNode) close() { n.srv.Stop(); n.stop() }

// shed drives the node's governor over or under its threshold.
func (n *fakeNode) shed(on bool) {
	other := 0.1
	if on {
		other = 0.9
	}
	for i := 0; i < 2; i++ {
		n.cpu.Total += 100
		n.cpu.Busy += 100 * other
		n.gov.Observe(n.cpu)
	}
	if n.gov.Shedding() != on {
		panic("governor did not follow")
	}
}

type fixture struct {
	f     *fakeHDFS
	nodes []*fakeNode
	spec  *schedule.Spec
	keys  map[string]bool
}

func imageGraph() *xformv1.Graph {
	return &xformv1.Graph{Version: 1, Seed: 11, Nodes: []*xformv1.Node{
		xformgraph.NewNodeSpec("dec", "decode_image", "input", nil),
		xformgraph.NewNodeSpec("rrc", "random_resized_crop", "dec", map[string]any{"size": []any{24}}),
		xformgraph.NewNodeSpec("flip", "random_hflip", "rrc", nil),
		xformgraph.NewNodeSpec("norm", "normalize", "flip", map[string]any{"mean": []any{0.5, 0.5, 0.5}, "std": []any{0.25, 0.25, 0.25}}),
		xformgraph.NewNodeSpec("t", "to_tensor", "norm", map[string]any{"layout": "CHW", "dtype": "float32"}),
	}, Outputs: []string{"t"}}
}

func videoGraph() *xformv1.Graph {
	return &xformv1.Graph{Version: 1, Seed: 12, Nodes: []*xformv1.Node{
		xformgraph.NewNodeSpec("dec", "decode_video", "input", map[string]any{"mode": "random_segment", "num": 4, "width": 32, "height": 24}),
		xformgraph.NewNodeSpec("t", "to_tensor", "dec", map[string]any{"layout": "TCHW", "dtype": "uint8"}),
	}, Outputs: []string{"t"}}
}

func newFixture(t *testing.T, corrupt map[string]bool) *fixture {
	t.Helper()
	m, err := datasets.LoadMedia(os.Getenv("NEWTRICKS_XFORM_MEDIA"))
	if err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	f := &fakeHDFS{local: map[string]string{}, blockSize: 48 << 10, nodes: []string{"dn-a", "dn-b", "dn-c"},
		repDir: filepath.Join(base, "replicas"), blocks: map[string]*pb.LocatedBlocks{}, paths: map[int64]string{}, denied: map[string]bool{},
		deniedUsers: map[string]bool{}, dir: &fakeDirectory{addrs: map[string]string{}}}
	os.MkdirAll(f.repDir, 0o700)
	fx := &fixture{f: f, keys: map[string]bool{}}
	spec := &schedule.Spec{Name: "t", Seed: 5, GlobalBatch: 8, WorldSize: 2, MaxSteps: 40}
	for i, ds := range []struct {
		name   string
		media  datasets.Media
		layout datasets.Layout
		g      *xformv1.Graph
		w      float64
	}{
		{"img", datasets.Media{Images: m.Images}, datasets.Layout{Shards: 2, PerShard: 6, Singles: 4, Corrupt: corrupt, Captions: true}, imageGraph(), 3},
		{"vid", datasets.Media{Images: m.Videos}, datasets.Layout{Shards: 1, PerShard: 3, Singles: 2}, videoGraph(), 1},
	} {
		dir := filepath.Join(base, ds.name)
		keys, err := datasets.Write(dir, ds.media, ds.layout)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			fx.keys[k] = true
		}
		hdfsDir := "/data/" + ds.name
		f.local[hdfsDir] = dir
		idx, err := dataset.Build(context.Background(), dataset.DirFS{Local: dir}, hdfsDir, dataset.BuildOptions{})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := dataset.Marshal(idx)
		if err := os.WriteFile(filepath.Join(dir, dataset.IndexName), b, 0o644); err != nil {
			t.Fatal(err)
		}
		spec.Sources = append(spec.Sources, schedule.Source{Name: ds.name, Dataset: hdfsDir, Weight: ds.w, Graph: ds.g})
		_ = i
	}
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	fx.spec = spec
	for _, u := range f.nodes {
		fx.nodes = append(fx.nodes, startNode(t, f, u, ""))
	}
	return fx
}

func (fx *fixture) open(t *testing.T, rank int, start uint64, offload bool, edit func(*reader.Config)) *reader.Reader {
	t.Helper()
	cfg := reader.Config{User: "alice", Spec: fx.spec, Rank: rank, StartStep: start,
		Locator: locator{fx.f, "alice"}, Store: store{fx.f}, Retry: 100 * time.Millisecond, MaxWait: 5 * time.Second}
	if offload {
		cfg.Directory = fx.f.dir // discovery, the default path
	}
	if edit != nil {
		edit(&cfg)
	}
	r, err := reader.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func steps(t *testing.T, r *reader.Reader, n int) []*reader.Step {
	t.Helper()
	var out []*reader.Step
	for i := 0; i < n; i++ {
		st, err := r.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, st)
	}
	return out
}

func compare(t *testing.T, what string, got, want []*reader.Step) map[string]int {
	t.Helper()
	paths := map[string]int{}
	for i := range want {
		if got[i].Step != want[i].Step || len(got[i].Samples) != len(want[i].Samples) {
			t.Fatalf("%s: step %d/%d shape differs", what, got[i].Step, want[i].Step)
		}
		for j, w := range want[i].Samples {
			g := got[i].Samples[j]
			paths[g.Path]++
			if g.Key != w.Key || g.Epoch != w.Epoch {
				t.Fatalf("%s: step %d slot %d: sample %q/%d, want %q/%d", what, w.Slot, got[i].Step, g.Key, g.Epoch, w.Key, w.Epoch)
			}
			if (g.Err == nil) != (w.Err == nil) {
				t.Fatalf("%s: step %d sample %q: err %v, local err %v", what, got[i].Step, g.Key, g.Err, w.Err)
			}
			if !bytes.Equal(g.Frames, w.Frames) {
				t.Fatalf("%s: step %d sample %q (%s): %d bytes differ from the local %d bytes", what, got[i].Step, g.Key, g.Path, len(g.Frames), len(w.Frames))
			}
			checkMembers(t, what, g, w) // samples_test.go
			checkMembers(t, what+" (local)", w, w)
		}
	}
	return paths
}

func TestOffloadEqualsLocal(t *testing.T) {
	fx := newFixture(t, nil)
	const n = 12
	for rank := 0; rank < 2; rank++ {
		local := steps(t, fx.open(t, rank, 0, false, nil), n)
		r := fx.open(t, rank, 0, true, nil)
		off := steps(t, r, n)
		paths := compare(t, fmt.Sprintf("rank %d", rank), off, local)
		st := r.Stats()
		t.Logf("rank %d: paths %v, stats offloaded=%d raw=%d local=%d bytes_from_nodes=%d", rank, paths, st.Offloaded, st.Raw, st.Local, st.BytesFromNodes)
		if paths["offload"] < n*4*9/10 {
			t.Errorf("rank %d: only %d of %d samples offloaded: %v", rank, paths["offload"], n*4, paths)
		}
		for _, s := range off[0].Samples {
			if s.Err != nil {
				t.Errorf("sample error: %v", s.Err)
			}
		}
	}
}

func TestSheddingFallsBackToRawAndRecovers(t *testing.T) {
	fx := newFixture(t, nil)
	local := steps(t, fx.open(t, 0, 0, false, nil), 20)
	for _, n := range fx.nodes {
		n.shed(true)
	}
	r := fx.open(t, 0, 0, true, nil)
	got := steps(t, r, 8)
	paths := compare(t, "shedding", got, local[:8])
	if paths["raw"] == 0 || paths["offload"] > 8 {
		// Steps 0..3 may have been prepared before the nodes shed? No: they shed before Open.
		t.Errorf("shedding nodes answered %v, want raw", paths)
	}
	for _, n := range fx.nodes {
		n.shed(false)
	}
	got = steps(t, r, 12)
	paths = compare(t, "recovered", got, local[8:20])
	if paths["offload"] < 12*4*8/10 {
		t.Errorf("after recovery: %v, want mostly offload", paths)
	}
}

func TestNodeDownFallsBackToHDFSAndReturns(t *testing.T) {
	fx := newFixture(t, nil)
	local := steps(t, fx.open(t, 1, 0, false, nil), 30)
	r := fx.open(t, 1, 0, true, nil)
	compare(t, "before", steps(t, r, 5), local[:5])
	addr := fx.nodes[1].addr
	fx.nodes[1].close()
	time.Sleep(50 * time.Millisecond)
	paths := compare(t, "node down", steps(t, r, 10), local[5:15])
	if paths["local"] == 0 {
		t.Errorf("with a node down: %v, want some local", paths)
	}
	// The node comes back on the same address (a restart: its sessions are gone).
	fx.nodes[1] = startNode(t, fx.f, "dn-b", addr)
	time.Sleep(300 * time.Millisecond)
	// The reader reopens in the background; steps prefetched meanwhile may still be local.
	next := 15
	for ; next < 22 && r.Stats().Reconnects == 0; next++ {
		compare(t, "node coming back", steps(t, r, 1), local[next:next+1])
		time.Sleep(50 * time.Millisecond)
	}
	compare(t, "prefetched", steps(t, r, 3), local[next:next+3])
	next += 3
	paths = compare(t, "node back", steps(t, r, 5), local[next:next+5])
	if paths["local"] > 0 {
		t.Errorf("after the node came back: %v, want no local", paths)
	}
	if r.Stats().Reconnects == 0 {
		t.Error("no reconnect counted")
	}
}

func TestResumeReproduces(t *testing.T) {
	fx := newFixture(t, nil)
	all := steps(t, fx.open(t, 0, 0, true, nil), 15)
	resumed := steps(t, fx.open(t, 0, 10, true, nil), 5)
	compare(t, "resume", resumed, all[10:])
}

func TestCorruptSampleIsItsOwnError(t *testing.T) {
	fx := newFixture(t, map[string]bool{"s000/000002": true, "s001/000001": true})
	r := fx.open(t, 0, 0, true, nil)
	bad, good := 0, 0
	for _, st := range steps(t, r, 40) {
		for _, s := range st.Samples {
			switch {
			case s.Err != nil:
				bad++
				if !errors.Is(s.Err, reader.ErrSample) || !strings.Contains(s.Err.Error(), s.Key) || !fx.keysCorrupt(s.Key) {
					t.Errorf("error %v does not name a corrupt sample", s.Err)
				}
			default:
				good++
			}
		}
	}
	if bad == 0 || good == 0 {
		t.Fatalf("%d bad, %d good samples", bad, good)
	}
}

func (fx *fixture) keysCorrupt(k string) bool { return k == "s000/000002" || k == "s001/000001" }

func TestDeniedFileFailsOpen(t *testing.T) {
	fx := newFixture(t, nil)
	fx.f.denied["/data/img/shard-001.tar"] = true
	cfg := reader.Config{User: "alice", Spec: fx.spec, Locator: locator{fx.f, "alice"}, Store: store{fx.f}, Nodes: []string{fx.nodes[0].addr}}
	_, err := reader.Open(context.Background(), cfg)
	if status.Code(errors.Unwrap(errors.Unwrap(err))) != codes.PermissionDenied && !strings.Contains(fmt.Sprint(err), "Permission denied") {
		t.Fatalf("err = %v, want permission denied", err)
	}
}

// goldenFixture puts the xformgraph golden inputs in a dataset ("<sample>.<ext>" files, so that
// the index key is the golden key) and lists every golden case as one explicit step.
func goldenFixture(t *testing.T) (*fixture, []golden.Case) {
	t.Helper()
	base := t.TempDir()
	f := &fakeHDFS{local: map[string]string{}, blockSize: 64 << 10, nodes: []string{"dn-a", "dn-b", "dn-c"},
		repDir: filepath.Join(base, "replicas"), blocks: map[string]*pb.LocatedBlocks{}, paths: map[int64]string{}, denied: map[string]bool{},
		deniedUsers: map[string]bool{}, dir: &fakeDirectory{addrs: map[string]string{}}}
	os.MkdirAll(f.repDir, 0o700)
	dir := filepath.Join(base, "golden")
	os.MkdirAll(dir, 0o755)
	cases := golden.Cases()
	spec := &schedule.Spec{Name: "golden", Seed: 1, GlobalBatch: 1, WorldSize: 1}
	srcOf := map[string]int{}
	for _, c := range cases {
		if err := os.WriteFile(filepath.Join(dir, c.Sample+path.Ext(c.Sample)), c.Input(), 0o644); err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("%s-s%d", c.GraphName, c.Seed)
		i, ok := srcOf[name]
		if !ok {
			i = len(spec.Sources)
			srcOf[name] = i
			spec.Sources = append(spec.Sources, schedule.Source{Name: name, Dataset: "/data/golden", Weight: 1, Graph: c.Graph()})
		}
		spec.Explicit = append(spec.Explicit, []schedule.ExplicitSample{{Source: i, Key: c.Key, Epoch: c.Epoch}})
	}
	f.local["/data/golden"] = dir
	idx, err := dataset.Build(context.Background(), dataset.DirFS{Local: dir}, "/data/golden", dataset.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := dataset.Marshal(idx)
	if err := os.WriteFile(filepath.Join(dir, dataset.IndexName), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	fx := &fixture{f: f, spec: spec}
	for _, u := range f.nodes {
		fx.nodes = append(fx.nodes, startNode(t, f, u, ""))
	}
	return fx, cases
}

// TestGoldenDigestsOnEveryPath checks the committed golden digests on the DataNode path
// (tensors from the session workers), the raw path (raw bytes from a node, transformed by the
// reader) and the local path (read and transformed by the reader).
func TestGoldenDigestsOnEveryPath(t *testing.T) {
	fx, cases := goldenFixture(t)
	for _, mode := range []struct {
		name    string
		offload bool
		raw     bool
		want    string
	}{{"datanode", true, false, "offload"}, {"raw", true, true, "raw"}, {"local", false, false, "local"}} {
		r := fx.open(t, 0, 0, mode.offload, func(c *reader.Config) { c.ForceRawOnly = mode.raw })
		for i, st := range steps(t, r, len(cases)) {
			s := st.Samples[0]
			if s.Err != nil {
				t.Fatalf("%s: case %s: %v", mode.name, cases[i].ID, s.Err)
			}
			if s.Path != mode.want {
				t.Errorf("%s: case %s came by %s", mode.name, cases[i].ID, s.Path)
			}
			if err := golden.Check(cases[i].ID, s.Frames); err != nil {
				t.Errorf("%s: %v", mode.name, err)
			}
		}
	}
}

// TestSessionRejects: bad requests are refused with a clear error before any work.
func TestSessionRejects(t *testing.T) {
	fx := newFixture(t, nil)
	cc, err := grpc.NewClient(fx.nodes[0].addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	c := pb.NewOffloadClient(cc)
	ctx := context.Background()
	good := func() *pb.OpenSessionRequest {
		req := &pb.OpenSessionRequest{User: "alice", Schedule: proto.Clone(fx.spec.ToProto()).(*pb.ScheduleSpec)}
		for _, src := range fx.spec.Sources {
			b, _ := os.ReadFile(filepath.Join(fx.f.local[src.Dataset], dataset.IndexName))
			ix, err := dataset.Parse(b)
			if err != nil {
				t.Fatal(err)
			}
			req.Sources = append(req.Sources, &pb.SessionSource{IndexSha256: ix.SHA256()})
		}
		for i := range fx.nodes {
			req.Members = append(req.Members, &pb.SessionMember{DatanodeUuid: fx.f.nodes[i]})
		}
		return req
	}
	fx.f.deniedUsers["mallory"] = true
	open, err := c.OpenSession(ctx, good())
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		edit func(r *pb.OpenSessionRequest)
		code codes.Code
	}{
		{"no user", func(r *pb.OpenSessionRequest) { r.User = "" }, codes.InvalidArgument},
		{"world size 0", func(r *pb.OpenSessionRequest) { r.Schedule.WorldSize = 0 }, codes.InvalidArgument},
		{"huge batch", func(r *pb.OpenSessionRequest) { r.Schedule.GlobalBatch = 1 << 30 }, codes.InvalidArgument},
		{"bad graph", func(r *pb.OpenSessionRequest) { r.Schedule.Sources[0].Graph.Nodes[0].Op = "rm_rf" }, codes.InvalidArgument},
		{"rank", func(r *pb.OpenSessionRequest) { r.Rank = 2 }, codes.InvalidArgument},
		{"sources", func(r *pb.OpenSessionRequest) { r.Sources = r.Sources[:1] }, codes.InvalidArgument},
		{"not a member", func(r *pb.OpenSessionRequest) { r.Members = r.Members[1:] }, codes.InvalidArgument},
		{"lookahead", func(r *pb.OpenSessionRequest) { r.Lookahead = 100000 }, codes.InvalidArgument},
		{"changed index", func(r *pb.OpenSessionRequest) { r.Sources[0].IndexSha256 = make([]byte, 32) }, codes.FailedPrecondition},
		{"a user who may not read the dataset", func(r *pb.OpenSessionRequest) { r.User = "mallory" }, codes.PermissionDenied},
		{"a member that is not a UUID", func(r *pb.OpenSessionRequest) { r.Members[1].DatanodeUuid = "127.0.0.1:22" }, codes.InvalidArgument},
		{"past the end", func(r *pb.OpenSessionRequest) { r.StartStep = 40 }, codes.InvalidArgument},
	}
	for _, tc := range cases {
		req := good()
		tc.edit(req)
		_, err := c.OpenSession(ctx, req)
		if status.Code(err) != tc.code {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.code)
		} else {
			t.Logf("%s: %v", tc.name, err)
		}
	}
	getStep := func(req *pb.GetStepRequest) error {
		st, err := c.GetStep(ctx, req)
		if err != nil {
			return err
		}
		for {
			if _, err := st.Recv(); err != nil {
				if errors.Is(err, io.EOF) {
					return nil
				}
				return err
			}
		}
	}
	id := open.GetSessionId()
	for _, tc := range []struct {
		name string
		req  *pb.GetStepRequest
		code codes.Code
	}{
		{"unknown session", &pb.GetStepRequest{User: "alice", SessionId: "nope"}, codes.NotFound},
		{"another user's session", &pb.GetStepRequest{User: "bob", SessionId: id}, codes.PermissionDenied},
		{"slot of another rank", &pb.GetStepRequest{User: "alice", SessionId: id, Slots: []uint32{6}}, codes.InvalidArgument},
		{"step past the end", &pb.GetStepRequest{User: "alice", SessionId: id, Step: 40}, codes.InvalidArgument},
	} {
		if err := getStep(tc.req); status.Code(err) != tc.code {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.code)
		}
	}
	if _, err := c.ReadRange(ctx, &pb.ReadRangeRequest{User: "alice", Block: &pb.LocatedBlock{BlockPoolId: "BP-1", BlockId: 1}, Length: 1 << 30}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("huge range: %v", err)
	}
	// Governor thresholds: administrators only, validated.
	if _, err := c.SetGovernor(ctx, &pb.SetGovernorRequest{User: "alice", ThresholdHigh: 0.9, ThresholdLow: 0.5}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("SetGovernor as alice: %v, want PermissionDenied", err)
	}
	if _, err := c.SetGovernor(ctx, &pb.SetGovernorRequest{User: "hdfs", ThresholdHigh: 0.5, ThresholdLow: 0.9}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("SetGovernor low > high: %v, want InvalidArgument", err)
	}
	if st, err := c.SetGovernor(ctx, &pb.SetGovernorRequest{User: "hdfs", ThresholdHigh: 0.9, ThresholdLow: 0.5}); err != nil || st.GetThresholdHigh() != 0.9 || st.GetThresholdLow() != 0.5 {
		t.Errorf("SetGovernor as hdfs: %v %v", st, err)
	}
	if _, err := c.CloseSession(ctx, &pb.CloseSessionRequest{User: "alice", SessionId: id}); err != nil {
		t.Fatal(err)
	}
	if err := getStep(&pb.GetStepRequest{User: "alice", SessionId: id}); status.Code(err) != codes.NotFound {
		t.Errorf("closed session: %v", err)
	}
}

// TestQueueIsCapped: with a 1 MiB cap and 0.8 MB samples, a node holds about one step's worth
// of finished samples beyond the one the reader waits for, however far it may look ahead.
func TestQueueIsCapped(t *testing.T) {
	fx := newFixture(t, nil)
	fx.f.queueMax = 1 << 20
	for i := range fx.nodes {
		fx.nodes[i].close()
		fx.nodes[i] = startNode(t, fx.f, fx.f.nodes[i], "")
	}
	big := *fx.spec
	big.Sources = append([]schedule.Source(nil), fx.spec.Sources...)
	g := imageGraph()
	g.Nodes[1] = xformgraph.NewNodeSpec("rrc", "random_resized_crop", "dec", map[string]any{"size": []any{256}}) // 256x256x3 float32 = 786 KB
	big.Sources[0].Graph = g
	fx.spec = &big
	r := fx.open(t, 0, 0, true, func(c *reader.Config) { c.Lookahead = 30; c.Prefetch = 1 })
	steps(t, r, 1)
	time.Sleep(time.Second) // let the workers run ahead as far as they may
	for i, n := range fx.nodes {
		q := n.sv.Sessions.Counters().QueuedBytes
		if q > 1<<20+800_000 {
			t.Errorf("node %d holds %d bytes of finished samples, cap 1 MiB", i, q)
		}
		t.Logf("node %d: %d bytes queued", i, q)
	}
	steps(t, r, 3) // and it still serves
}

// otherDomain is this process's determinism domain with another FFmpeg release.
func otherDomain() string {
	d := xformgraph.Domain()
	d.FFmpeg = "0.0-other-build"
	return d.String()
}

// TestDomainMismatchAtOpen: one node of another determinism domain makes the reader transform
// every sample itself (raw bytes from all nodes), and its stats say why.
func TestDomainMismatchAtOpen(t *testing.T) {
	fx := newFixture(t, nil)
	local := steps(t, fx.open(t, 0, 0, false, nil), 10)
	fx.nodes[1].close()
	fx.nodes[1] = startNodeWith(t, fx.f, "dn-b", fx.nodes[1].addr, nodeOpts{domain: otherDomain()})
	r := fx.open(t, 0, 0, true, nil)
	paths := compare(t, "mismatch", steps(t, r, 10), local)
	st := r.Stats()
	t.Logf("paths %v; raw-only %v: %s", paths, st.RawOnly, st.RawOnlyReason)
	if paths["offload"] > 0 || paths["raw"] == 0 {
		t.Errorf("paths %v: want every sample raw (transformed by the reader), none offloaded", paths)
	}
	if !st.RawOnly || !strings.Contains(st.RawOnlyReason, fx.nodes[1].addr) || !strings.Contains(st.RawOnlyReason, "0.0-other-build") {
		t.Errorf("stats do not say raw-only because of node 1's domain: %v %q", st.RawOnly, st.RawOnlyReason)
	}
	var opened, rawOnly, mismatched int64
	for _, n := range fx.nodes {
		c := n.sv.Sessions.Counters()
		opened, rawOnly, mismatched = opened+c.SessionsOpened, rawOnly+c.SessionsRawOnly, mismatched+c.DomainMismatches
	}
	if opened != 3 || rawOnly != 3 || mismatched != 1 {
		t.Errorf("nodes counted %d sessions, %d raw-only, %d domain mismatches; want 3, 3, 1", opened, rawOnly, mismatched)
	}
}

// TestDomainChangeOnReconnect: a node restarts as another build mid-session; from the reconnect
// on the reader makes every sample itself, and never mixes the node's tensors in.
func TestDomainChangeOnReconnect(t *testing.T) {
	fx := newFixture(t, nil)
	local := steps(t, fx.open(t, 1, 0, false, nil), 40)
	r := fx.open(t, 1, 0, true, nil)
	before := compare(t, "before", steps(t, r, 5), local[:5])
	if before["offload"] == 0 || r.Stats().RawOnly {
		t.Fatalf("before the restart: %v, raw-only %v", before, r.Stats().RawOnly)
	}
	addr := fx.nodes[0].addr
	fx.nodes[0].close()
	fx.nodes[0] = startNodeWith(t, fx.f, "dn-a", addr, nodeOpts{domain: otherDomain()})
	next := 5
	for ; next < 30 && !r.Stats().RawOnly; next++ {
		compare(t, "node coming back", steps(t, r, 1), local[next:next+1])
		time.Sleep(50 * time.Millisecond)
	}
	if !r.Stats().RawOnly {
		t.Fatal("the reader did not go raw-only after node 0 came back as another build")
	}
	compare(t, "prefetched", steps(t, r, 3), local[next:next+3]) // made before the switch
	next += 3
	after := compare(t, "after", steps(t, r, 7), local[next:next+7])
	st := r.Stats()
	t.Logf("before %v, after %v; %s", before, after, st.RawOnlyReason)
	if after["offload"] > 0 {
		t.Errorf("tensors used after the reader went raw-only: %v", after)
	}
	if after["raw"] == 0 {
		t.Errorf("after the switch: %v, want the nodes' raw bytes (sessions reopened raw-only)", after)
	}
}

// TestForeignTensorsRefused: a node that claims the reader's domain but sends tensors stamped
// with another one is caught by the frame headers: its tensors are refused, the samples made
// here, and the reader goes raw-only.
func TestForeignTensorsRefused(t *testing.T) {
	fx := newFixture(t, nil)
	local := steps(t, fx.open(t, 0, 0, false, nil), 12)
	addr := fx.nodes[2].addr
	fx.nodes[2].close()
	fx.nodes[2] = startNodeWith(t, fx.f, "dn-c", addr, nodeOpts{domain: otherDomain(), claimReaderDomain: true})
	r := fx.open(t, 0, 0, true, nil)
	paths := compare(t, "foreign tensors", steps(t, r, 12), local)
	st := r.Stats()
	t.Logf("paths %v, refused %d; %s", paths, st.RefusedTensors, st.RawOnlyReason)
	if st.RefusedTensors == 0 || !st.RawOnly || !strings.Contains(st.RawOnlyReason, "sent tensors") {
		t.Errorf("foreign tensors not refused: refused %d, raw-only %v %q", st.RefusedTensors, st.RawOnly, st.RawOnlyReason)
	}
}

// TestReleaseReusesBuffers: released steps give their buffers back; a released step's frames
// are gone, later steps are unaffected and still equal the local output.
func TestReleaseReusesBuffers(t *testing.T) {
	fx := newFixture(t, nil)
	local := steps(t, fx.open(t, 0, 0, false, nil), 16)
	r := fx.open(t, 0, 0, true, nil)
	for i := 0; i < 16; i++ {
		st := steps(t, r, 1)
		compare(t, "released", st, local[i:i+1])
		st[0].Release()
		for _, s := range st[0].Samples {
			if s.Path == "offload" && s.Frames != nil {
				t.Fatal("a released sample still has frames")
			}
		}
		st[0].Release() // twice is harmless
	}
}

// TestBatchedAndOlderNodes: a node answers a step's ready samples in few messages
// (GetStepBatch); a node without GetStepBatch (an older datanode-ext) is asked with GetStep,
// one message per sample. Both give the local bytes.
func TestBatchedAndOlderNodes(t *testing.T) {
	fx := newFixture(t, nil)
	local := steps(t, fx.open(t, 0, 0, false, nil), 16)
	var msgs [3]atomic.Int64
	for i, older := range []bool{false, false, true} {
		addr := fx.nodes[i].addr
		fx.nodes[i].close()
		fx.nodes[i] = startNodeWith(t, fx.f, []string{"dn-a", "dn-b", "dn-c"}[i], addr, nodeOpts{older: older, msgs: &msgs[i]})
	}
	r := fx.open(t, 0, 0, true, nil)
	var got []*reader.Step
	for i := 0; i < 16; i++ {
		got = append(got, steps(t, r, 1)...)
		time.Sleep(20 * time.Millisecond) // the nodes get ahead: later steps are ready when asked
	}
	paths := compare(t, "batched and older nodes", got, local)
	st := r.Stats()
	t.Logf("paths %v; messages sent by the nodes %d %d %d (the last one older)", paths, msgs[0].Load(), msgs[1].Load(), msgs[2].Load())
	if paths["offload"] < 16*4*9/10 {
		t.Errorf("only %d of %d samples offloaded: %v", paths["offload"], 16*4, paths)
	}
	if st.Offloaded == 0 || msgs[2].Load() == 0 {
		t.Errorf("the older node sent nothing (%d messages)", msgs[2].Load())
	}
	if msgs[0].Load()+msgs[1].Load() >= st.Offloaded-msgs[2].Load() {
		t.Errorf("batching nodes sent %d messages for about %d samples", msgs[0].Load()+msgs[1].Load(), st.Offloaded-msgs[2].Load())
	}
}

// TestNodesJoinAndLeave (issue 21 item 3): the reader takes its members from namenode-ext's
// directory and follows it between steps: a node that joins is used (its own session, the
// members' ownership recomputed), a node that leaves is dropped; the bytes equal the local
// ones throughout and, once switched, nothing is read from HDFS.
func TestNodesJoinAndLeave(t *testing.T) {
	fx := newFixture(t, nil)
	local := steps(t, fx.open(t, 0, 0, false, nil), 40)
	fx.f.dir.set("dn-c", "") // dn-c runs but is not listed yet
	r := fx.open(t, 0, 0, true, func(c *reader.Config) { c.Rediscover = 50 * time.Millisecond })
	if st := r.Stats(); st.Members != 2 {
		t.Fatalf("%d members, want the 2 listed", st.Members)
	}
	next := 0
	compare(t, "two members", steps(t, r, 4), local[next:next+4])
	next += 4
	if c := fx.nodes[2].sv.Sessions.Counters(); c.SessionsOpened != 0 {
		t.Fatalf("dn-c got %d sessions before it was listed", c.SessionsOpened)
	}
	fx.f.dir.set("dn-c", fx.nodes[2].addr)
	waitFor := func(what string, ok func(reader.Stats) bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !ok(r.Stats()); next++ {
			if next+1 > len(local) || time.Now().After(deadline) {
				t.Fatalf("%s: not seen (stats %+v)", what, r.Stats())
			}
			compare(t, what, steps(t, r, 1), local[next:next+1])
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitFor("dn-c joins", func(s reader.Stats) bool { return s.Members == 3 })
	compare(t, "prefetched", steps(t, r, 3), local[next:next+3])
	next += 3
	joined := compare(t, "three members", steps(t, r, 6), local[next:next+6])
	next += 6
	if c := fx.nodes[2].sv.Sessions.Counters(); c.SessionsOpened == 0 || c.Transformed+c.Raw == 0 {
		t.Errorf("dn-c joined but served nothing: %+v", c)
	}
	if joined["local"] > 0 {
		t.Errorf("with three members: %v, want nothing read locally", joined)
	}
	// dn-a leaves: its registration expires, and it is stopped.
	fx.f.dir.set("dn-a", "")
	fx.nodes[0].close()
	waitFor("dn-a leaves", func(s reader.Stats) bool { return s.Members == 2 && s.MemberChanges >= 2 })
	compare(t, "prefetched", steps(t, r, 3), local[next:next+3])
	next += 3
	left := compare(t, "after dn-a left", steps(t, r, 6), local[next:next+6])
	t.Logf("joined: %v, after dn-a left: %v, stats %+v", joined, left, r.Stats())
	if left["local"] > 0 {
		t.Errorf("after dn-a left: %v, want its samples from the remaining holders, none locally", left)
	}
}
