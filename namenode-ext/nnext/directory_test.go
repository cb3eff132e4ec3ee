package nnext

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/newtricks/newtricks/internal/authn"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// reportHost answers GetDatanodeReport with its live DataNodes and GetBlockLocations from a
// table (this unit test only; conformance uses the real NameNode).
type reportHost struct {
	pb.NameNodeHostClient
	mu      sync.Mutex
	live    []*pb.DatanodeLoad
	reports atomic.Int64
	files   map[string]*pb.LocatedBlocks
	calls   atomic.Int64
}

func (h *reportHost) GetDatanodeReport(context.Context, *pb.GetDatanodeReportRequest, ...grpc.CallOption) (*pb.DatanodeReport, error) {
	h.reports.Add(1)
	h.mu.Lock()
	defer h.mu.Unlock()
	return &pb.DatanodeReport{Live: append([]*pb.DatanodeLoad(nil), h.live...)}, nil
}

func (h *reportHost) GetBlockLocations(_ context.Context, r *pb.GetBlockLocationsRequest, _ ...grpc.CallOption) (*pb.LocatedBlocks, error) {
	h.calls.Add(1)
	if r.GetUser() != "alice" {
		return nil, status.Errorf(codes.PermissionDenied, "Permission denied: user=%s, access=READ, inode=%q", r.GetUser(), r.GetPath())
	}
	lb, ok := h.files[r.GetPath()]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "File does not exist: %s", r.GetPath())
	}
	return lb, nil
}

func simpleCaller(addr string) context.Context {
	return authn.NewContext(context.Background(), authn.Identity{Method: authn.MethodSimple}, addr, nil)
}

func provenCaller(user, addr string) context.Context {
	return authn.NewContext(context.Background(), authn.Identity{User: user, Method: authn.MethodKerberos}, addr, nil)
}

func TestDirectoryRegisterAndList(t *testing.T) {
	h := &reportHost{live: []*pb.DatanodeLoad{
		{Uuid: "dn-a", Ip: "10.0.0.1", Hostname: "dn1.example.com", XferAddr: "10.0.0.1:9866"},
		{Uuid: "dn-b", Ip: "10.0.0.2", Hostname: "dn2.example.com", XferAddr: "10.0.0.2:9866"},
	}}
	now := time.Unix(1000, 0)
	d := newDirectory(h, 15*time.Second, registrantUsers([]string{"newtricks"}, "", nil), nil)
	d.now = func() time.Time { return now }

	r, err := d.Register(simpleCaller("10.0.0.1:50000"), &pb.RegisterDataNodeExtRequest{User: "hdfs", DatanodeUuid: "dn-a", ApiPort: 9890, Tls: true})
	if err != nil {
		t.Fatal(err)
	}
	// The address is the DataNode's IP from the NameNode's report, with the registered port.
	if n := r.GetNode(); n.GetApiAddress() != "10.0.0.1:9890" || n.GetHostname() != "dn1.example.com" || !n.GetTls() || n.GetXferAddr() != "10.0.0.1:9866" {
		t.Fatalf("registered %v", n)
	}
	if r.GetTtlMs() != 15000 || r.GetRenewMs() != 5000 {
		t.Fatalf("ttl %d renew %d", r.GetTtlMs(), r.GetRenewMs())
	}

	refused := []struct {
		name string
		ctx  context.Context
		req  *pb.RegisterDataNodeExtRequest
		code codes.Code
		msg  string
	}{
		{"no authenticated caller", context.Background(), &pb.RegisterDataNodeExtRequest{User: "hdfs", DatanodeUuid: "dn-b", ApiPort: 1}, codes.Unauthenticated, ""},
		{"simple without a user", simpleCaller("10.0.0.2:1"), &pb.RegisterDataNodeExtRequest{DatanodeUuid: "dn-b", ApiPort: 1}, codes.InvalidArgument, ""},
		{"another host's DataNode", simpleCaller("10.0.0.9:1"), &pb.RegisterDataNodeExtRequest{User: "x", DatanodeUuid: "dn-b", ApiPort: 1}, codes.PermissionDenied, "own address 10.0.0.2"},
		{"not a live DataNode", simpleCaller("10.0.0.2:1"), &pb.RegisterDataNodeExtRequest{User: "x", DatanodeUuid: "dn-zz", ApiPort: 1}, codes.FailedPrecondition, "not live"},
		{"port 0", simpleCaller("10.0.0.2:1"), &pb.RegisterDataNodeExtRequest{User: "x", DatanodeUuid: "dn-b"}, codes.InvalidArgument, "api_port"},
		{"port > 65535", simpleCaller("10.0.0.2:1"), &pb.RegisterDataNodeExtRequest{User: "x", DatanodeUuid: "dn-b", ApiPort: 70000}, codes.InvalidArgument, "api_port"},
		{"bad uuid", simpleCaller("10.0.0.2:1"), &pb.RegisterDataNodeExtRequest{User: "x", DatanodeUuid: "dn-b/../x", ApiPort: 1}, codes.InvalidArgument, "datanode_uuid"},
		{"long uuid", simpleCaller("10.0.0.2:1"), &pb.RegisterDataNodeExtRequest{User: "x", DatanodeUuid: strings.Repeat("a", 200), ApiPort: 1}, codes.InvalidArgument, "datanode_uuid"},
		{"proven, not a registrant", provenCaller("alice", "10.0.0.2:1"), &pb.RegisterDataNodeExtRequest{DatanodeUuid: "dn-b", ApiPort: 1}, codes.PermissionDenied, "may not register"},
		{"proven registrant from another host", provenCaller("newtricks", "10.0.0.1:1"), &pb.RegisterDataNodeExtRequest{DatanodeUuid: "dn-b", ApiPort: 1}, codes.PermissionDenied, "own address"},
	}
	for _, tc := range refused {
		_, err := d.Register(tc.ctx, tc.req)
		if status.Code(err) != tc.code || !strings.Contains(status.Convert(err).Message(), tc.msg) {
			t.Errorf("%s: %v, want %v containing %q", tc.name, err, tc.code, tc.msg)
		}
	}
	if _, err := d.Register(provenCaller("newtricks", "10.0.0.2:4"), &pb.RegisterDataNodeExtRequest{DatanodeUuid: "dn-b", ApiPort: 9891}); err != nil {
		t.Fatalf("proven registrant: %v", err)
	}

	list := func() []string {
		t.Helper()
		resp, err := d.List(simpleCaller("10.9.9.9:1"), &pb.ListDataNodeExtsRequest{User: "alice"})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, n := range resp.GetNodes() {
			out = append(out, n.GetDatanodeUuid()+"="+n.GetApiAddress())
		}
		return out
	}
	if got := fmt.Sprint(list()); got != "[dn-a=10.0.0.1:9890 dn-b=10.0.0.2:9891]" {
		t.Fatalf("list %s", got)
	}
	if _, err := d.List(context.Background(), &pb.ListDataNodeExtsRequest{User: "alice"}); status.Code(err) != codes.Unauthenticated {
		t.Errorf("List without an authenticated caller: %v", err)
	}
	// dn-a renews, dn-b does not: after the TTL only dn-a is listed.
	now = now.Add(10 * time.Second)
	if _, err := d.Register(simpleCaller("10.0.0.1:50000"), &pb.RegisterDataNodeExtRequest{User: "hdfs", DatanodeUuid: "dn-a", ApiPort: 9890}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(6 * time.Second)
	if got := fmt.Sprint(list()); got != "[dn-a=10.0.0.1:9890]" {
		t.Fatalf("after dn-b's TTL: %s", got)
	}
	// dn-a leaves the live DataNodes: dropped as soon as the report says so.
	h.mu.Lock()
	h.live = h.live[1:]
	h.mu.Unlock()
	now = now.Add(reportMaxAge)
	if got := list(); len(got) != 0 {
		t.Fatalf("after dn-a left the report: %v", got)
	}
}

// TestDirectoryAsksTheNameNodeSparingly: registrations of known DataNodes reuse the report;
// an unknown UUID asks again at most once a second.
func TestDirectoryAsksTheNameNodeSparingly(t *testing.T) {
	h := &reportHost{live: []*pb.DatanodeLoad{{Uuid: "dn-a", Ip: "10.0.0.1"}}}
	now := time.Unix(1000, 0)
	d := newDirectory(h, 15*time.Second, registrantUsers(nil, "", nil), nil)
	d.now = func() time.Time { return now }
	for i := 0; i < 100; i++ {
		if _, err := d.Register(simpleCaller("10.0.0.1:1"), &pb.RegisterDataNodeExtRequest{User: "u", DatanodeUuid: "dn-a", ApiPort: 1}); err != nil {
			t.Fatal(err)
		}
		d.Register(simpleCaller("10.0.0.1:1"), &pb.RegisterDataNodeExtRequest{User: "u", DatanodeUuid: "dn-new", ApiPort: 1})
		now = now.Add(10 * time.Millisecond)
	}
	if n := h.reports.Load(); n > 2 {
		t.Errorf("%d datanode reports for 200 registrations within a second, want at most 2", n)
	}
	// A proven caller with no registrant users configured and no principal is refused.
	if _, err := d.Register(provenCaller("newtricks", "10.0.0.1:1"), &pb.RegisterDataNodeExtRequest{DatanodeUuid: "dn-a", ApiPort: 1}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("proven caller without registrants: %v", err)
	}
	// The default registrant is the short name of namenode-ext's own principal.
	reg := registrantUsers(nil, "newtricks/nn.example.com@EXAMPLE.COM", func(_ context.Context, p string) (string, error) {
		if p != "newtricks/nn.example.com@EXAMPLE.COM" {
			return "", errors.New("unexpected principal")
		}
		return "newtricks", nil
	})
	if m, err := reg(context.Background()); err != nil || !m["newtricks"] || len(m) != 1 {
		t.Errorf("default registrants %v %v", m, err)
	}
}

func TestLocateBatch(t *testing.T) {
	h := &reportHost{files: map[string]*pb.LocatedBlocks{}}
	var paths []string
	for i := 0; i < 10; i++ {
		p := fmt.Sprintf("/data/f%d", i)
		h.files[p] = &pb.LocatedBlocks{FileLength: int64(i), Blocks: []*pb.LocatedBlock{{BlockId: int64(i + 1), NumBytes: int64(i)}}}
		paths = append(paths, p)
	}
	api := &namespaceAPI{host: h}
	ctx := simpleCaller("10.0.0.5:1")
	resp, err := api.LocateBatch(ctx, &pb.LocateBatchRequest{Paths: paths, User: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetFiles()) != len(paths) {
		t.Fatalf("%d files for %d paths", len(resp.GetFiles()), len(paths))
	}
	for i, lb := range resp.GetFiles() {
		if !proto.Equal(lb, h.files[paths[i]]) {
			t.Fatalf("file %d out of order: %v", i, lb)
		}
	}
	for _, tc := range []struct {
		name string
		req  *pb.LocateBatchRequest
		code codes.Code
		msg  string
	}{
		{"no paths", &pb.LocateBatchRequest{User: "alice"}, codes.InvalidArgument, "paths"},
		{"too many", &pb.LocateBatchRequest{User: "alice", Paths: make([]string, MaxLocateBatch+1)}, codes.InvalidArgument, "paths"},
		{"relative", &pb.LocateBatchRequest{User: "alice", Paths: []string{"/data/f1", "data/f2"}}, codes.InvalidArgument, "path 1"},
		{"unclean", &pb.LocateBatchRequest{User: "alice", Paths: []string{"/data/../etc"}}, codes.InvalidArgument, "clean"},
		{"no user", &pb.LocateBatchRequest{Paths: paths}, codes.InvalidArgument, ""},
		{"another user", &pb.LocateBatchRequest{User: "bob", Paths: paths}, codes.PermissionDenied, "user=bob"},
		{"missing file", &pb.LocateBatchRequest{User: "alice", Paths: []string{"/data/f1", "/data/nope"}}, codes.NotFound, "/data/nope"},
	} {
		_, err := api.LocateBatch(ctx, tc.req)
		if status.Code(err) != tc.code || !strings.Contains(status.Convert(err).Message(), tc.msg) {
			t.Errorf("%s: %v, want %v containing %q", tc.name, err, tc.code, tc.msg)
		}
	}
	// An answer over the budget stops early, at least one file in.
	big := &pb.LocatedBlocks{FileLength: 1}
	for i := 0; i < 30000; i++ {
		big.Blocks = append(big.Blocks, &pb.LocatedBlock{BlockId: int64(i), Token: &pb.Token{Identifier: make([]byte, 300)}})
	}
	h.files["/data/big0"], h.files["/data/big1"], h.files["/data/big2"] = big, big, big
	resp, err = api.LocateBatch(ctx, &pb.LocateBatchRequest{User: "alice", Paths: []string{"/data/big0", "/data/big1", "/data/big2"}})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(resp.GetFiles()); n < 1 || n > 2 || proto.Size(resp) > 2*locateBatchBudget {
		t.Fatalf("over budget: %d files, %d bytes", n, proto.Size(resp))
	}
}
