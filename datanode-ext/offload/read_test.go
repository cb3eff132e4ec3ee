package offload

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc"

	"github.com/newtricks/newtricks/datanode-ext/replica"
	"github.com/newtricks/newtricks/dataset"
	"github.com/newtricks/newtricks/internal/authn"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// TestReadReplica: a range of a replica file, checked against the block's size (an end past it,
// also by int64 overflow, is INVALID_ARGUMENT before anything is opened) and verified against
// its checksum file; no error names a local path.
func TestReadReplica(t *testing.T) {
	dir := t.TempDir()
	data := []byte("0123456789")
	p, mp := filepath.Join(dir, "blk_1"), filepath.Join(dir, "blk_1_1.meta")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mp, replica.Meta(data, replica.TypeCRC32C, 4), 0o600); err != nil {
		t.Fatal(err)
	}
	b := &pb.LocatedBlock{BlockPoolId: "BP-1", BlockId: 1}
	for _, tc := range []struct {
		name        string
		path        string
		size        int64
		off, n      int64
		want        string
		err         error
		errContains string
	}{
		{"whole block", p, 10, 0, 10, "0123456789", nil, ""},
		{"middle", p, 10, 3, 4, "3456", nil, ""},
		{"empty at the end", p, 10, 10, 0, "", nil, ""},
		{"past the block", p, 10, 8, 3, "", ErrInvalid, "[8, +3) of block 1 of 10 bytes"},
		{"negative offset", p, 10, -1, 2, "", ErrInvalid, "of block 1"},
		{"negative length", p, 10, 0, -1, "", ErrInvalid, "of block 1"},
		{"end overflows", p, 10, 4, math.MaxInt64 - 1, "", ErrInvalid, "of block 1"},
		{"offset overflows", p, 10, math.MaxInt64, 16 << 20, "", ErrInvalid, "of block 1"},
		{"block smaller than the file", p, 4, 2, 4, "", ErrInvalid, "of 4 bytes"},
		{"file shorter than the block", p, 12, 8, 4, "", ErrUnavailable, "replica ends before byte 12"},
		{"no file", filepath.Join(dir, "blk_2"), 10, 0, 1, "", ErrUnavailable, "open replica: no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readReplica(context.Background(), Replica{Path: tc.path, MetaPath: mp, NumBytes: tc.size, Finalized: true}, b, tc.off, tc.n, nil)
			if tc.err != nil {
				if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), tc.errContains) {
					t.Fatalf("%v, want %v saying %q", err, tc.err, tc.errContains)
				}
				if strings.Contains(err.Error(), dir) {
					t.Errorf("the error names the replica's directory: %v", err)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Fatalf("%q %v, want %q", got, err, tc.want)
			}
		})
	}
	t.Run("corrupt: reported when finalized, unavailable either way", func(t *testing.T) {
		bad := []byte("0123456X89")
		if err := os.WriteFile(p, bad, 0o600); err != nil {
			t.Fatal(err)
		}
		var reported []error
		report := func(_ context.Context, _ *pb.LocatedBlock, _ Replica, err error) { reported = append(reported, err) }
		_, err := readReplica(context.Background(), Replica{Path: p, MetaPath: mp, NumBytes: 10, Finalized: true}, b, 0, 3, report)
		if err != nil || len(reported) != 0 {
			t.Fatalf("chunk 0 is good: %v, reported %v", err, reported)
		}
		_, err = readReplica(context.Background(), Replica{Path: p, MetaPath: mp, NumBytes: 10, Finalized: true}, b, 6, 2, report)
		if !errors.Is(err, ErrUnavailable) || !errors.Is(err, replica.ErrCorrupt) || len(reported) != 1 {
			t.Fatalf("flipped chunk 1: %v, reported %v; want ErrUnavailable wrapping ErrCorrupt, reported once", err, reported)
		}
		_, err = readReplica(context.Background(), Replica{Path: p, MetaPath: mp, NumBytes: 10}, b, 6, 2, report)
		if !errors.Is(err, ErrUnavailable) || errors.Is(err, replica.ErrCorrupt) || len(reported) != 1 {
			t.Fatalf("a replica being written: %v, reported %v; want ErrUnavailable, not reported", err, reported)
		}
	})
}

// sessionReader is a session's reader on node self as user.
func sessionReader(w *world, host Host, peers Peers, self, user string, counted func(int, error)) *reader {
	r := &reader{host: host, peers: peers, dir: w.directory(), user: user, self: self, paths: map[int64]resolved{}, counted: counted}
	if h, ok := host.(*fakeHost); ok {
		r.report = func(ctx context.Context, b *pb.LocatedBlock, rep Replica, _ error) {
			h.ReportBadBlock(ctx, b, rep.GenStamp, "test")
		}
	}
	return r
}

// TestReadLocalAcrossBlocks: a range spanning blocks comes from the local replica files, each
// block resolved by the DataNode once per session.
func TestReadLocalAcrossBlocks(t *testing.T) {
	w := newWorld(t, 8, "")
	w.blockSize = 256
	host := &fakeHost{w: w, uuid: "dn-a"}
	r := sessionReader(w, host, nil, "dn-a", "alice", nil)
	lb := w.locate(w.ix.FilePath(0), "alice")
	data, err := os.ReadFile(filepath.Join(w.dir, w.ix.Files()[0].GetPath()))
	if err != nil {
		t.Fatal(err)
	}
	if len(lb.GetBlocks()) < 3 {
		t.Fatalf("file of %d blocks: the case needs 3", len(lb.GetBlocks()))
	}
	for _, rg := range [][2]int64{{0, int64(len(data))}, {100, 600}, {255, 2}, {256, 256}, {int64(len(data)), 0}} {
		got, err := r.read(context.Background(), lb, rg[0], rg[1])
		if err != nil {
			t.Fatalf("[%d, +%d): %v", rg[0], rg[1], err)
		}
		if !bytes.Equal(got, data[rg[0]:rg[0]+rg[1]]) {
			t.Errorf("[%d, +%d): bytes differ from the file's", rg[0], rg[1])
		}
	}
	if got := host.calls.Load(); got != int64(len(lb.GetBlocks())) {
		t.Errorf("the DataNode resolved %d blocks for %d blocks read again and again", got, len(lb.GetBlocks()))
	}
	if _, err := r.read(context.Background(), lb, 10, int64(len(data))); !errors.Is(err, dataset.ErrInvalid) {
		t.Errorf("a range past the file: %v, want dataset.ErrInvalid", err)
	}
	bob := sessionReader(w, host, nil, "dn-a", "bob", nil)
	if _, err := bob.read(context.Background(), lb, 0, 10); !errors.Is(err, ErrPermission) {
		t.Errorf("alice's tokens read as bob: %v, want ErrPermission", err)
	}
}

// TestReadFromPeers: pieces this node does not hold come from a holder's datanode-ext at the
// address the directory lists, in the order of the block's locations; an unavailable holder is
// skipped, a refused token is final, and a block no listed node holds is unavailable. Every
// peer read is counted.
func TestReadFromPeers(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, 8, "")
	w.nodes = []string{"dn-a", "dn-b", "dn-c"}
	w.holders = func(id int64) []string { // odd blocks here, even ones on dn-b and dn-c
		if id%2 == 1 {
			return []string{"dn-a"}
		}
		return []string{"dn-b", "dn-c"}
	}
	lb := w.locate(w.ix.FilePath(0), "alice")
	data, err := os.ReadFile(filepath.Join(w.dir, w.ix.Files()[0].GetPath()))
	if err != nil {
		t.Fatal(err)
	}
	remote := 0
	for _, b := range lb.GetBlocks() {
		if b.GetBlockId()%2 == 0 {
			remote++
		}
	}
	if remote == 0 || remote == len(lb.GetBlocks()) {
		t.Fatalf("%d of %d blocks remote: the case needs both", remote, len(lb.GetBlocks()))
	}
	for _, tc := range []struct {
		name  string
		fail  map[string]error
		err   error
		asked []string // per remote block
	}{
		{"first holder answers", nil, nil, []string{"dn-b:1"}},
		{"unavailable holder skipped", map[string]error{"dn-b:1": fmt.Errorf("%w: down", ErrUnavailable)}, nil, []string{"dn-b:1", "dn-c:1"}},
		{"refused token is final", map[string]error{"dn-b:1": fmt.Errorf("%w: token", ErrPermission)}, ErrPermission, []string{"dn-b:1"}},
		{"no holder answers", map[string]error{"dn-b:1": ErrUnavailable, "dn-c:1": ErrUnavailable}, ErrUnavailable, []string{"dn-b:1", "dn-c:1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			peers := &worldPeers{w: w, fail: tc.fail}
			var reads, failed, bytesRead int
			r := sessionReader(w, &fakeHost{w: w, uuid: "dn-a"}, peers, "dn-a", "alice", func(n int, err error) {
				reads++
				if err != nil {
					failed++
				}
				bytesRead += n
			})
			got, err := r.read(ctx, lb, 0, int64(len(data)))
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("%v, want %v", err, tc.err)
				}
				if asked := peers.asked(); !slices.Equal(asked, tc.asked) {
					t.Errorf("asked %v, want %v (the first remote block only)", asked, tc.asked)
				}
				return
			}
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("read %d bytes, %v; want the file's %d", len(got), err, len(data))
			}
			var want []string
			for i := 0; i < remote; i++ {
				want = append(want, tc.asked...)
			}
			if asked := peers.asked(); !slices.Equal(asked, want) {
				t.Errorf("asked %v, want %v", asked, want)
			}
			if reads != len(want) || failed != len(want)-remote || bytesRead <= 0 {
				t.Errorf("counted %d reads (%d failed, %d bytes), want %d (%d failed)", reads, failed, bytesRead, len(want), len(want)-remote)
			}
		})
	}

	t.Run("block on no listed node", func(t *testing.T) {
		peers := &worldPeers{w: w}
		r := sessionReader(w, &fakeHost{w: w, uuid: "dn-a"}, peers, "dn-a", "alice", nil)
		r.dir = worldDir{"dn-x": {UUID: "dn-x", Addr: "dn-x:1"}}
		if _, err := r.read(ctx, lb, 0, int64(len(data))); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "no DataNode with a datanode-ext in namenode-ext's directory") {
			t.Errorf("%v, want ErrUnavailable: no listed DataNode", err)
		}
		if asked := peers.asked(); len(asked) != 0 {
			t.Errorf("asked %v: a holder without a directory entry is never dialed", asked)
		}
	})
}

// TestPeersOverGRPC: a session on one node reads the pieces it does not hold from another
// node's ReadRange over real gRPC (GRPCPeers against the Server), and answers with the sample's
// bytes; both nodes count the reads.
func TestPeersOverGRPC(t *testing.T) {
	w := newWorld(t, 8, "")
	w.nodes = []string{"dn-a", "dn-b"}
	w.holders = func(id int64) []string { return w.nodes[id%2 : id%2+1] }
	b := startNode(t, w, "dn-b", nodeOpts{})
	addr := serveTCP(t, b)
	a := startNode(t, w, "dn-a", nodeOpts{peers: NewGRPCPeers(), dir: worldDir{"dn-b": {UUID: "dn-b", Addr: addr}}})
	req := w.openRequest()
	req.RawOnly = true
	s := a.open(t, req) // the index's first block is on dn-b
	got, err := a.getStep(t, &pb.GetStepRequest{User: "alice", SessionId: s.id, Slots: []uint32{0, 1}})
	if err != nil {
		t.Fatal(err)
	}
	for _, smp := range got {
		expectSample(t, w, s, smp, 0, false)
	}
	ca, cb := a.mgr.Counters(), b.mgr.Counters()
	if ca.PeerReads == 0 || ca.PeerReadErrors != 0 || cb.RangesServed != ca.PeerReads || cb.RangeBytesServed != ca.PeerReadBytes {
		t.Errorf("dn-a read %d pieces (%d failed, %d bytes) from dn-b, which served %d ranges (%d bytes)",
			ca.PeerReads, ca.PeerReadErrors, ca.PeerReadBytes, cb.RangesServed, cb.RangeBytesServed)
	}
	if ca.RangesServed != 0 || cb.PeerReads != 0 {
		t.Errorf("reads the other way: %+v %+v", ca, cb)
	}
}

// serveTCP serves n's Offload service on a loopback TCP address too (GRPCPeers dials one).
func serveTCP(t *testing.T, n *node) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(authn.ServerOptions(authn.Simple{Imp: adminImp{}})...)
	(&Server{Sessions: n.mgr, Gov: n.gov, Self: func() (string, string) { return n.uuid, "x:1" }}).Register(srv)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return lis.Addr().String()
}
