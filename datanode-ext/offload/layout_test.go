package offload

import (
	"context"
	"fmt"
	"net"
	"os"
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
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/newtricks/newtricks/internal/authn"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// countingListener is a TCP listener that counts the connections made to it (and closes
// them): an address of the test's own that the node must never dial.
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

// legacyLayout appends what the old OpenSessionRequest carried and the node trusted: block maps
// declaring a 2^62-byte index and files (SessionSource fields 2 and 3), and a member API
// address (SessionMember field 2). The fields are reserved now: the bytes reach the node as
// unknown fields.
func legacyLayout(t *testing.T, req *pb.OpenSessionRequest, peerAddr string) []byte {
	t.Helper()
	huge := &pb.LocatedBlocks{FileLength: 1 << 62, Blocks: []*pb.LocatedBlock{{BlockPoolId: "BP-1", BlockId: 1, NumBytes: 1 << 62,
		Locations: []*pb.DatanodeRef{{Uuid: "dn-b"}}, Token: &pb.Token{Identifier: []byte("user=alice")}}}}
	hb, err := proto.Marshal(huge)
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range req.Sources {
		var raw []byte
		raw = protowire.AppendTag(raw, 2, protowire.BytesType)
		raw = protowire.AppendBytes(raw, hb)
		for i := 0; i < 8; i++ {
			raw = protowire.AppendTag(raw, 3, protowire.BytesType)
			raw = protowire.AppendBytes(raw, hb)
		}
		src.ProtoReflect().SetUnknown(raw)
	}
	for _, m := range req.Members {
		var raw []byte
		raw = protowire.AppendTag(raw, 2, protowire.BytesType)
		raw = protowire.AppendString(raw, peerAddr)
		m.ProtoReflect().SetUnknown(raw)
	}
	b, err := proto.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestOpenTakesNoLayoutFromTheCaller (issue 25 items 1 and 2): a request carrying the old
// layout fields (a 2^62-byte index and files, a member address of the test's own listener)
// opens a session on the real layout (located as alice), its samples are the real bytes, the
// pieces on dn-b are read from dn-b's listed address, and nobody dials the listener.
func TestOpenTakesNoLayoutFromTheCaller(t *testing.T) {
	w := newWorld(t, 8, "")
	w.nodes = []string{"dn-a", "dn-b"}
	w.holders = func(id int64) []string { return w.nodes[id%2 : id%2+1] }
	b := startNode(t, w, "dn-b", nodeOpts{})
	addr := serveTCP(t, b)
	a := startNode(t, w, "dn-a", nodeOpts{peers: NewGRPCPeers(), dir: worldDir{"dn-b": {UUID: "dn-b", Addr: addr}}})
	lis := listenCounting(t)
	req := w.openProto()
	req.RawOnly = true
	wire := legacyLayout(t, req, lis.Addr().String())
	var decoded pb.OpenSessionRequest
	if err := proto.Unmarshal(wire, &decoded); err != nil {
		t.Fatal(err)
	}
	if len(decoded.GetSources()[0].ProtoReflect().GetUnknown()) == 0 {
		t.Fatal("the legacy fields did not survive as unknown fields: the case tests nothing")
	}
	resp, err := a.c.OpenSession(context.Background(), &decoded)
	if err != nil {
		t.Fatal(err)
	}
	for step := uint64(0); step < 3; step++ {
		got, err := a.getStep(t, &pb.GetStepRequest{User: "alice", SessionId: resp.GetSessionId(), Step: step, Slots: []uint32{0, 1}})
		if err != nil {
			t.Fatal(err)
		}
		a.mgr.mu.Lock()
		s := a.mgr.sessions[resp.GetSessionId()]
		a.mgr.mu.Unlock()
		for _, smp := range got {
			expectSample(t, w, s, smp, step, false)
		}
	}
	if ca := a.mgr.Counters(); ca.PeerReads == 0 || ca.PeerReadErrors != 0 {
		t.Errorf("dn-a read %d pieces from dn-b (%d failed): the case needs peer reads", ca.PeerReads, ca.PeerReadErrors)
	}
	if n := lis.accepted.Load(); n != 0 {
		t.Errorf("the caller's address was dialed %d times", n)
	}
	s := a.mgr.sessions[resp.GetSessionId()]
	if got := s.files[0][0].GetFileLength(); got != w.ix.Files()[0].GetLength() {
		t.Errorf("the session's file 0 is %d bytes, the real one %d", got, w.ix.Files()[0].GetLength())
	}
}

// TestOpenNeedsNamenodeExt: without namenode-ext a node cannot locate anything, and says so.
func TestOpenNeedsNamenodeExt(t *testing.T) {
	w := newWorld(t, 8, "")
	n := startNode(t, w, "dn-a", nodeOpts{noNamespace: true})
	_, err := n.c.OpenSession(context.Background(), w.openProto())
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "newtricks.datanode.ext.namenode.api") {
		t.Fatalf("%v, want FailedPrecondition naming the key", err)
	}
}

// TestOpenStaleFile: a file whose real length differs from the index is refused before any
// sample is read.
func TestOpenStaleFile(t *testing.T) {
	w := newWorld(t, 8, "")
	n := startNode(t, w, "dn-a", nodeOpts{})
	f := filepath.Join(w.dir, w.ix.Files()[2].GetPath())
	fh, err := os.OpenFile(f, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fh.Write([]byte("more"))
	fh.Close()
	w.forget(w.ix.FilePath(2))
	_, err = n.c.OpenSession(context.Background(), w.openProto())
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "stale index") || !strings.Contains(err.Error(), w.ix.Files()[2].GetPath()) {
		t.Fatalf("%v, want FailedPrecondition: stale index naming the file", err)
	}
}

// TestPeerErrorsSayNoAddress: a peer that refuses connections and one that accepts and hangs up
// give the caller the same error: the DataNode's UUID and UNAVAILABLE, no address, no port, no
// connection error (the old code returned the dial error: a port scanner).
func TestPeerErrorsSayNoAddress(t *testing.T) {
	open := listenCounting(t)
	closedLis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := closedLis.Addr().String()
	closedLis.Close()
	p := &GRPCPeers{}
	defer p.Close()
	blk := &pb.LocatedBlock{BlockPoolId: "BP-1", BlockId: 7}
	var msgs []string
	for _, addr := range []string{open.Addr().String(), closed} {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		_, err := p.ReadRange(ctx, Endpoint{UUID: "dn-b", Addr: addr}, "alice", blk, 0, 10)
		cancel()
		if !errorsIsUnavailable(err) {
			t.Fatalf("%s: %v, want ErrUnavailable", addr, err)
		}
		_, port, _ := net.SplitHostPort(addr)
		if strings.Contains(err.Error(), port) || strings.Contains(err.Error(), "127.0.0.1") || strings.Contains(err.Error(), "refused") {
			t.Errorf("%s: the error tells the network: %v", addr, err)
		}
		msgs = append(msgs, err.Error())
	}
	if msgs[0] != msgs[1] {
		t.Errorf("an open and a closed port answer differently:\n%s\n%s", msgs[0], msgs[1])
	}
}

func errorsIsUnavailable(err error) bool {
	return err != nil && status.Code(toStatus(err)) == codes.Unavailable
}

// TestPeerConnectionsBounded: at most Max connections are kept, the least recently used
// unused ones go first, and idle ones are closed.
func TestPeerConnectionsBounded(t *testing.T) {
	now := time.Unix(1000, 0)
	p := &GRPCPeers{Max: 2, Idle: time.Minute}
	p.now = func() time.Time { return now }
	defer p.Close()
	for i := 0; i < 5; i++ {
		pc, err := p.conn(Endpoint{UUID: fmt.Sprint("dn-", i), Addr: fmt.Sprintf("127.0.0.1:%d", 40000+i)})
		if err != nil {
			t.Fatal(err)
		}
		p.done(pc)
		if n := p.Len(); n > 2 {
			t.Fatalf("%d connections kept, max 2", n)
		}
	}
	// In-use connections are never closed: the cache may exceed Max while they are held.
	var held []*peerConn
	for i := 0; i < 3; i++ {
		pc, err := p.conn(Endpoint{UUID: fmt.Sprint("dn-h", i), Addr: fmt.Sprintf("127.0.0.1:%d", 41000+i)})
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, pc)
	}
	if n := p.Len(); n != 3 {
		t.Fatalf("%d connections with 3 held, want 3", n)
	}
	for _, pc := range held {
		p.done(pc)
	}
	if n := p.Len(); n != 2 {
		t.Fatalf("%d connections after release, want 2", n)
	}
	now = now.Add(2 * time.Minute)
	pc, _ := p.conn(Endpoint{UUID: "dn-z", Addr: "127.0.0.1:42000"})
	p.done(pc)
	if n := p.Len(); n != 1 {
		t.Fatalf("%d connections after the others idled, want 1", n)
	}
}

// fakeNNExt is namenode-ext's public API in-process: LocateBatch answering at most batch files
// per call (0: Unimplemented, an older namenode-ext), the directory's List and Register, and
// a switch that makes it unavailable.
type fakeNNExt struct {
	pb.UnimplementedNamespaceServer
	pb.UnimplementedDataNodeDirectoryServer
	batch int
	down  atomic.Bool

	mu         sync.Mutex
	eps        []*pb.DataNodeExt
	lists      int
	registered []string
	calls      int
}

func (f *fakeNNExt) check() error {
	if f.down.Load() {
		return status.Error(codes.Unavailable, "namenode-ext down")
	}
	f.mu.Lock()
	f.calls++
	f.mu.Unlock()
	return nil
}

func (f *fakeNNExt) located(p, user string) *pb.LocatedBlocks {
	return &pb.LocatedBlocks{FileLength: int64(len(p)), Blocks: []*pb.LocatedBlock{{Token: &pb.Token{Identifier: []byte("user=" + user)}}}}
}

func (f *fakeNNExt) LocateBatch(_ context.Context, r *pb.LocateBatchRequest) (*pb.LocateBatchResponse, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	if f.batch == 0 {
		return nil, status.Error(codes.Unimplemented, "unknown method LocateBatch")
	}
	out := &pb.LocateBatchResponse{}
	for _, p := range r.GetPaths()[:min(f.batch, len(r.GetPaths()))] {
		if strings.Contains(p, "secret") {
			return nil, status.Errorf(codes.PermissionDenied, "locate %s: Permission denied: user=%s", p, r.GetUser())
		}
		out.Files = append(out.Files, f.located(p, r.GetUser()))
	}
	return out, nil
}

func (f *fakeNNExt) Locate(_ context.Context, r *pb.LocateRequest) (*pb.LocatedBlocks, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	return f.located(r.GetPath(), r.GetUser()), nil
}

func (f *fakeNNExt) List(context.Context, *pb.ListDataNodeExtsRequest) (*pb.ListDataNodeExtsResponse, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lists++
	return &pb.ListDataNodeExtsResponse{Nodes: f.eps}, nil
}

func (f *fakeNNExt) Register(_ context.Context, r *pb.RegisterDataNodeExtRequest) (*pb.RegisterDataNodeExtResponse, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.registered = append(f.registered, fmt.Sprintf("%s:%d:%v:%s", r.GetDatanodeUuid(), r.GetApiPort(), r.GetTls(), r.GetUser()))
	return &pb.RegisterDataNodeExtResponse{RenewMs: 3000, TtlMs: 9000}, nil
}

func serveNNExt(t *testing.T, f *fakeNNExt) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(authn.ServerOptions(authn.Simple{})...)
	pb.RegisterNamespaceServer(srv, f)
	pb.RegisterDataNodeDirectoryServer(srv, f)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return lis.Addr().String()
}

// TestNameNodeExtClient: files located as the session's user in batches (following early
// stops, and file by file from a namenode-ext without LocateBatch), failover between two
// namenode-ext, the directory asked again only when stale or for an unknown UUID (at most
// once per MinRefresh), entries without a usable address dropped, and registration with both.
func TestNameNodeExtClient(t *testing.T) {
	a := &fakeNNExt{batch: 3, eps: []*pb.DataNodeExt{
		{DatanodeUuid: "dn-b", ApiAddress: "10.0.0.2:9890", Hostname: "dn2", Tls: true},
		{DatanodeUuid: "dn-bad", ApiAddress: "nowhere"},
	}}
	b := &fakeNNExt{batch: 0, eps: a.eps}
	plain := func(string) ([]grpc.DialOption, error) {
		return []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, nil
	}
	nn, err := NewNameNodeExt([]string{serveNNExt(t, a), serveNNExt(t, b)}, plain, "hdfs", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer nn.Close()
	now := time.Unix(1000, 0)
	nn.now = func() time.Time { return now }
	ctx := context.Background()
	paths := []string{"/d/a", "/d/bb", "/d/ccc", "/d/dddd", "/d/eeeee", "/d/f", "/d/g"}
	got, err := nn.Locate(ctx, "alice", paths)
	if err != nil {
		t.Fatal(err)
	}
	for i, lb := range got {
		if lb.GetFileLength() != int64(len(paths[i])) || string(lb.GetBlocks()[0].GetToken().GetIdentifier()) != "user=alice" {
			t.Fatalf("file %d: %v", i, lb)
		}
	}
	if a.calls != 3 {
		t.Errorf("%d LocateBatch calls for 7 files answered 3 at a time, want 3", a.calls)
	}
	if _, err := nn.Locate(ctx, "alice", []string{"/d/a", "/d/secret"}); status.Code(toStatus(err)) != codes.PermissionDenied || !strings.Contains(err.Error(), "user=alice") {
		t.Errorf("a refused file: %v, want PermissionDenied with the NameNode's message", err)
	}
	a.down.Store(true)
	if got, err := nn.Locate(ctx, "alice", paths); err != nil || len(got) != len(paths) || b.calls != 1+len(paths) { // one LocateBatch (Unimplemented), then Locate per file
		t.Errorf("failover to an older namenode-ext: %d files, %v, %d Locate calls", len(got), err, b.calls)
	}
	a.down.Store(false)

	ep, ok := nn.Lookup(ctx, "dn-b")
	if !ok || ep.Addr != "10.0.0.2:9890" || ep.Hostname != "dn2" || !ep.TLS {
		t.Fatalf("Lookup(dn-b) = %+v %v", ep, ok)
	}
	if _, ok := nn.Lookup(ctx, "dn-bad"); ok {
		t.Error("an entry without host:port was kept")
	}
	lists := func() int {
		a.mu.Lock()
		defer a.mu.Unlock()
		b.mu.Lock()
		defer b.mu.Unlock()
		return a.lists + b.lists
	}
	base := lists()
	for i := 0; i < 50; i++ {
		nn.Lookup(ctx, "dn-b")
		nn.Lookup(ctx, "dn-unknown")
		now = now.Add(10 * time.Millisecond)
	}
	if n := lists() - base; n > 1 {
		t.Errorf("%d listings within half a second, want at most 1", n)
	}
	now = now.Add(6 * time.Second)
	nn.Lookup(ctx, "dn-b")
	if lists() == base {
		t.Error("a stale listing was not refreshed")
	}

	renew, err := nn.Register(ctx, "dn-a", 9890, true)
	if err != nil || renew != 3*time.Second {
		t.Fatalf("Register: renew %v, %v", renew, err)
	}
	if fmt.Sprint(a.registered, b.registered) != "[dn-a:9890:true:hdfs] [dn-a:9890:true:hdfs]" {
		t.Errorf("registered %v and %v, want both", a.registered, b.registered)
	}
	a.down.Store(true)
	b.down.Store(true)
	if _, err := nn.Register(ctx, "dn-a", 9890, true); err == nil {
		t.Error("Register with every namenode-ext down succeeded")
	}
}
