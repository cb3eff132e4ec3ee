package offload

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/proto"

	"github.com/newtricks/newtricks/datanode-ext/governor"
	"github.com/newtricks/newtricks/datanode-ext/replica"
	"github.com/newtricks/newtricks/dataset"
	"github.com/newtricks/newtricks/internal/authn"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
	xformv1 "github.com/newtricks/newtricks/proto/gen/xformv1"
	"github.com/newtricks/newtricks/schedule"
	"github.com/newtricks/newtricks/xformgraph"
)

// world is a small HDFS in temp files: a dataset of PNG files (one sample each) and its index,
// every file cut into blocks of blockSize bytes so that samples span blocks, a replica file per
// block, and "tokens" naming the user they were issued to (the fake DataNode refuses a token of
// another user, as the real one does).
type world struct {
	t         testing.TB
	root      string // the dataset's HDFS path
	dir       string // its local copy
	repDir    string
	blockSize int64
	nodes     []string // DataNode UUIDs
	// holders places block i (1-based) on some of the nodes (default: all of them).
	holders func(id int64) []string
	ix      *dataset.Index
	spec    *schedule.Spec
	corrupt string // key of the sample that is not an image ("" for none)
	// readers may read the dataset (default alice only: anyone else is refused by the
	// "NameNode", as a 0700 directory would be); badTokens makes the files' tokens (not the
	// index's) ones the DataNode refuses, as an expired token would be.
	readers   map[string]bool
	badTokens bool

	mu     sync.Mutex
	nextID int64
	blocks map[string]*pb.LocatedBlocks // by HDFS path, without tokens
	paths  map[int64]string             // block id -> replica file
	metas  map[int64]string             // block id -> its checksum file (CRC32C, metaChunk)
	good   map[int64]string             // block id -> the other members' copy of a flipped replica
}

// metaChunk is the fixture's bytes per checksum: small, so that a block has several chunks.
const metaChunk = 64

// testGraph decodes an image and outputs its pixels: fast, and any mistake shows in the bytes.
func testGraph() *xformv1.Graph {
	return &xformv1.Graph{Version: 1, Seed: 3, Nodes: []*xformv1.Node{
		xformgraph.NewNodeSpec("dec", "decode_image", "input", nil),
		xformgraph.NewNodeSpec("t", "to_tensor", "dec", map[string]any{"layout": "CHW", "dtype": "uint8"}),
	}, Outputs: []string{"t"}}
}

// testPNG is a w x h image whose pixels depend on seed (noise, so that it does not compress to
// nothing and spans several blocks).
func testPNG(t testing.TB, w, h int, seed uint32) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	x := seed*2654435761 + 1
	for i := range img.Pix {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		img.Pix[i] = byte(x)
	}
	img.Set(0, 0, color.NRGBA{R: byte(seed), A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// newWorld writes n samples (keys "s00".."s<n-1>") and indexes them; corrupt names a key whose
// file is garbage. The schedule: global batch 4, world size 2 (rank 0 has slots 0 and 1),
// 20 steps.
func newWorld(t testing.TB, n int, corrupt string) *world {
	t.Helper()
	base := t.TempDir()
	w := &world{t: t, root: "/data/t", dir: filepath.Join(base, "t"), repDir: filepath.Join(base, "replicas"), blockSize: 512,
		nodes: []string{"dn-a"}, corrupt: corrupt, blocks: map[string]*pb.LocatedBlocks{}, paths: map[int64]string{},
		metas: map[int64]string{}, good: map[int64]string{}, readers: map[string]bool{"alice": true}}
	for _, d := range []string{w.dir, w.repDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i++ {
		key := fmt.Sprintf("s%02d", i)
		data := testPNG(t, 16, 12, uint32(i))
		if key == corrupt {
			data = bytes.Repeat([]byte("not an image "), 40)
		}
		if err := os.WriteFile(filepath.Join(w.dir, key+".png"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m, err := dataset.Build(context.Background(), dataset.DirFS{Local: w.dir}, w.root, dataset.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := dataset.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.dir, dataset.IndexName), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if w.ix, err = dataset.Parse(b); err != nil {
		t.Fatal(err)
	}
	w.spec = &schedule.Spec{Name: "t", Seed: 7, GlobalBatch: 4, WorldSize: 2, MaxSteps: 20,
		Sources: []schedule.Source{{Name: "img", Dataset: w.root, Weight: 1, Graph: testGraph()}}}
	if err := w.spec.Validate(); err != nil {
		t.Fatal(err)
	}
	return w
}

// locate returns the blocks of an HDFS path of the dataset with tokens for user, cutting the
// file into replicas the first time.
func (w *world) locate(p, user string) *pb.LocatedBlocks {
	w.t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	lb, ok := w.blocks[p]
	if !ok {
		data, err := os.ReadFile(filepath.Join(w.dir, filepath.FromSlash(p[len(w.root)+1:])))
		if err != nil {
			w.t.Fatal(err)
		}
		lb = &pb.LocatedBlocks{FileLength: int64(len(data))}
		for off := int64(0); off < int64(len(data)); off += w.blockSize {
			n := min(w.blockSize, int64(len(data))-off)
			w.nextID++
			id := w.nextID
			rp := filepath.Join(w.repDir, fmt.Sprintf("blk_%d", id))
			if err := os.WriteFile(rp, data[off:off+n], 0o600); err != nil {
				w.t.Fatal(err)
			}
			mp := filepath.Join(w.repDir, fmt.Sprintf("blk_%d_%d.meta", id, 1000+id))
			if err := os.WriteFile(mp, replica.Meta(data[off:off+n], replica.TypeCRC32C, metaChunk), 0o600); err != nil {
				w.t.Fatal(err)
			}
			w.paths[id], w.metas[id] = rp, mp
			holders := w.nodes
			if w.holders != nil {
				holders = w.holders(id)
			}
			b := &pb.LocatedBlock{BlockPoolId: "BP-1", BlockId: id, GenStamp: 1000 + id, NumBytes: n, Offset: off}
			for _, u := range holders {
				b.Locations = append(b.Locations, &pb.DatanodeRef{Uuid: u})
			}
			lb.Blocks = append(lb.Blocks, b)
		}
		w.blocks[p] = lb
	}
	out := proto.Clone(lb).(*pb.LocatedBlocks)
	tok := "user=" + user
	if w.badTokens && p != path.Join(w.root, dataset.IndexName) {
		tok = "user=expired"
	}
	for _, b := range out.Blocks {
		b.Token = &pb.Token{Identifier: []byte(tok), Password: []byte("x")}
	}
	return out
}

// forget drops what the world located for a path (after its local file changed).
func (w *world) forget(p string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.blocks, p)
}

// worldNS is the world's Namespace: what namenode-ext's LocateBatch answers, as the user
// (a user not among the world's readers is refused, as the NameNode refuses a 0700 dataset).
type worldNS struct {
	w     *world
	calls atomic.Int64
	// lie, if set, may change what is answered for a path (a namenode-ext that is wrong, or a
	// file that changed after the open: what the read path must survive).
	lie func(path string, lb *pb.LocatedBlocks)
}

func (ns *worldNS) Locate(_ context.Context, user string, paths []string) ([]*pb.LocatedBlocks, error) {
	ns.calls.Add(1)
	var out []*pb.LocatedBlocks
	for _, p := range paths {
		if !ns.w.readers[user] {
			return nil, fmt.Errorf("namenode-ext: locate %s: %w: Permission denied: user=%s, access=READ_EXECUTE, inode=%q", p, ErrPermission, user, ns.w.root)
		}
		if !strings.HasPrefix(p, ns.w.root+"/") {
			return nil, fmt.Errorf("namenode-ext: locate %s: %w: File does not exist", p, ErrNotFound)
		}
		if _, err := os.Stat(filepath.Join(ns.w.dir, filepath.FromSlash(p[len(ns.w.root)+1:]))); err != nil {
			return nil, fmt.Errorf("namenode-ext: locate %s: %w: File does not exist", p, ErrNotFound)
		}
		lb := ns.w.locate(p, user)
		if ns.lie != nil {
			ns.lie(p, lb)
		}
		out = append(out, lb)
	}
	return out, nil
}

// worldDir is a Directory of fixed endpoints.
type worldDir map[string]Endpoint

func (d worldDir) Lookup(_ context.Context, uuid string) (Endpoint, bool) {
	ep, ok := d[uuid]
	return ep, ok
}

// directory lists every node of the world at "<uuid>:1".
func (w *world) directory() worldDir {
	d := worldDir{}
	for _, u := range w.nodes {
		d[u] = Endpoint{UUID: u, Addr: u + ":1"}
	}
	return d
}

// openRequest opens rank 0 from step 0 on every node of the world, as alice.
func (w *world) openRequest() OpenRequest {
	return OpenRequest{Schedule: w.spec, Sources: []Source{{IndexSHA256: w.ix.SHA256()}}, Members: append([]string(nil), w.nodes...),
		DeterminismDomain: xformgraph.Domain().String()}
}

// openProto is openRequest on the wire.
func (w *world) openProto() *pb.OpenSessionRequest {
	r := w.openRequest()
	// A deep copy: ToProto shares the graphs, and tests edit the request.
	out := &pb.OpenSessionRequest{User: "alice", Schedule: proto.Clone(r.Schedule.ToProto()).(*pb.ScheduleSpec), DeterminismDomain: r.DeterminismDomain}
	for _, s := range r.Sources {
		out.Sources = append(out.Sources, &pb.SessionSource{IndexSha256: s.IndexSHA256})
	}
	for _, m := range r.Members {
		out.Members = append(out.Members, &pb.SessionMember{DatanodeUuid: m})
	}
	return out
}

// sampleBytes returns the encoded bytes of the sample with this key, read from the local copy.
func (w *world) sampleBytes(key string) []byte {
	w.t.Helper()
	i, ok := w.ix.Lookup(key)
	if !ok {
		w.t.Fatalf("no sample %q", key)
	}
	s := w.ix.Sample(i)
	b, err := os.ReadFile(filepath.Join(w.dir, filepath.FromSlash(w.ix.Files()[s.GetFile()].GetPath())))
	if err != nil {
		w.t.Fatal(err)
	}
	return b[s.GetOffset() : s.GetOffset()+s.GetLength()]
}

// localFrames is what the reader would make of a sample itself.
func (w *world) localFrames(key string, epoch uint64) []byte {
	w.t.Helper()
	g, err := xformgraph.Compile(testGraph(), nil, xformgraph.Limits{})
	if err != nil {
		w.t.Fatal(err)
	}
	out, err := g.Run(context.Background(), xformgraph.Sample{Key: key, Epoch: epoch, Data: w.sampleBytes(key)})
	if err != nil {
		w.t.Fatal(err)
	}
	b, err := out.AppendFrames(nil)
	if err != nil {
		w.t.Fatal(err)
	}
	return b
}

// fakeHost is one DataNode's token check: a token must name the user, and the block must be
// held by this node. It records the bad blocks reported to it; resolve, if set, runs first in
// every Resolve (a test blocks or panics there).
type fakeHost struct {
	w       *world
	uuid    string
	calls   atomic.Int64
	resolve func(b *pb.LocatedBlock)
	// notFinalized makes every replica look as if it were being written.
	notFinalized bool

	mu      sync.Mutex
	reports []string // "block/genstamp"
}

func (h *fakeHost) Resolve(_ context.Context, user string, b *pb.LocatedBlock) (Replica, error) {
	h.calls.Add(1)
	if h.resolve != nil {
		h.resolve(b)
	}
	if string(b.GetToken().GetIdentifier()) != "user="+user {
		return Replica{}, fmt.Errorf("%w: block token not valid for %s", ErrPermission, user)
	}
	held := false
	for _, l := range b.GetLocations() {
		held = held || l.GetUuid() == h.uuid
	}
	h.w.mu.Lock()
	p, ok := h.w.paths[b.GetBlockId()]
	mp := h.w.metas[b.GetBlockId()]
	h.w.mu.Unlock()
	if !ok || !held {
		return Replica{}, fmt.Errorf("%w: no replica of block %d here", ErrUnavailable, b.GetBlockId())
	}
	return Replica{Path: p, MetaPath: mp, NumBytes: b.GetNumBytes(), GenStamp: 1000 + b.GetBlockId(), Finalized: !h.notFinalized}, nil
}

func (h *fakeHost) ReportBadBlock(_ context.Context, b *pb.LocatedBlock, gen int64, reason string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.reports = append(h.reports, fmt.Sprintf("%d/%d", b.GetBlockId(), gen))
	return nil
}

func (h *fakeHost) reported() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.reports...)
}

// flip flips one byte of a block's replica file on the nodes that read w.paths (the checksum
// file is left as it was); the other members (worldPeers) keep a good copy.
func (w *world) flip(id, at int64) {
	w.t.Helper()
	w.mu.Lock()
	p := w.paths[id]
	w.mu.Unlock()
	b, err := os.ReadFile(p)
	if err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(p+".good", b, 0o600); err != nil {
		w.t.Fatal(err)
	}
	w.mu.Lock()
	w.good[id] = p + ".good"
	w.mu.Unlock()
	b[at] ^= 0x40
	if err := os.WriteFile(p, b, 0o600); err != nil {
		w.t.Fatal(err)
	}
}

// adminImp says "hdfs" is the only administrator.
type adminImp struct{}

func (adminImp) AuthorizeProxy(context.Context, string, string, string) error {
	return errors.New("no proxy users")
}
func (adminImp) IsAdmin(_ context.Context, u string) (bool, error) { return u == "hdfs", nil }

// node is one datanode-ext's offload: a Manager over a fake host, its governor (driven by
// shed), and the real gRPC edge on an in-memory listener.
type node struct {
	uuid string
	mgr  *Manager
	gov  *governor.Governor
	host *fakeHost
	ns   *worldNS
	cpu  governor.Sample
	c    pb.OffloadClient
	// self is what the node says its UUID is ("" until the DataNode told it).
	self atomic.Value
}

type nodeOpts struct {
	cfg    Config
	run    bool // start the workers and the reaper
	peers  Peers
	domain string
	// dir is where the node finds its peers (default: every node of the world at
	// "<uuid>:1"); noNamespace starts it without namenode-ext.
	dir         Directory
	noNamespace bool
}

func startNode(t *testing.T, w *world, uuid string, o nodeOpts) *node {
	t.Helper()
	gov, err := governor.New(governor.Config{High: 0.5, Low: 0.4}, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := &node{uuid: uuid, gov: gov, host: &fakeHost{w: w, uuid: uuid}, ns: &worldNS{w: w}}
	n.self.Store(uuid)
	if o.cfg.Workers == 0 {
		o.cfg.Workers = 1
	}
	if o.dir == nil {
		o.dir = w.directory()
	}
	opts := Options{Host: n.host, Peers: o.peers, Gov: gov, Domain: o.domain, Directory: o.dir,
		Self: func() string { return n.self.Load().(string) }}
	if !o.noNamespace {
		opts.Namespace = n.ns
	}
	n.mgr, err = NewManager(o.cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	if o.run {
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		n.mgr.Run(ctx)
	}
	srv := grpc.NewServer(authn.ServerOptions(authn.Simple{Imp: adminImp{}})...)
	(&Server{Sessions: n.mgr, Gov: gov, Version: "test", Self: func() (string, string) { return n.self.Load().(string), "x:1" }}).Register(srv)
	lis := bufconn.Listen(1 << 20)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient("passthrough:///offload", grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	n.c = pb.NewOffloadClient(conn)
	return n
}

// shed drives the node's governor over (on) or under its thresholds.
func (n *node) shed(t *testing.T, on bool) {
	t.Helper()
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
		t.Fatalf("governor shedding %v, want %v", n.gov.Shedding(), on)
	}
}

// open opens a session on the Manager directly.
func (n *node) open(t *testing.T, req OpenRequest) *Session {
	t.Helper()
	res, err := n.mgr.Open(context.Background(), "alice", req)
	if err != nil {
		t.Fatal(err)
	}
	n.mgr.mu.Lock()
	defer n.mgr.mu.Unlock()
	return n.mgr.sessions[res.SessionID]
}

// getStep asks for one step through the gRPC edge and returns its samples by slot.
func (n *node) getStep(t *testing.T, req *pb.GetStepRequest) (map[uint32]*pb.OffloadSample, error) {
	t.Helper()
	st, err := n.c.GetStep(context.Background(), req)
	if err != nil {
		return nil, err
	}
	out := map[uint32]*pb.OffloadSample{}
	for {
		s, err := st.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return out, err
		}
		if _, dup := out[s.GetSlot()]; dup {
			t.Fatalf("slot %d answered twice", s.GetSlot())
		}
		out[s.GetSlot()] = s
	}
}

// worldPeers stand in for the other nodes' Offload.ReadRange: the same token check, then the
// world's replica file; fail makes the node at an address answer an error instead.
type worldPeers struct {
	w    *world
	fail map[string]error

	mu    sync.Mutex
	calls []string // addresses asked, in order
}

func (p *worldPeers) ReadRange(_ context.Context, ep Endpoint, user string, b *pb.LocatedBlock, off, n int64) ([]byte, error) {
	addr := ep.Addr
	p.mu.Lock()
	p.calls = append(p.calls, addr)
	p.mu.Unlock()
	if err := p.fail[addr]; err != nil {
		return nil, err
	}
	if string(b.GetToken().GetIdentifier()) != "user="+user {
		return nil, fmt.Errorf("%w: block token not valid for %s", ErrPermission, user)
	}
	p.w.mu.Lock()
	f := replica.File{Data: p.w.peerPath(b.GetBlockId()), Meta: p.w.metas[b.GetBlockId()], Size: b.GetNumBytes(), BlockID: b.GetBlockId()}
	p.w.mu.Unlock()
	return f.Read(off, n)
}

// peerPath is where the other members keep block id: the local replica file, unless a test
// flipped a byte of it (flip), which corrupts this node's replica only; w.mu is held.
func (w *world) peerPath(id int64) string {
	if g, ok := w.good[id]; ok {
		return g
	}
	return w.paths[id]
}

func (p *worldPeers) asked() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.calls...)
}
