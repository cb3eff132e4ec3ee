package nnhost_test

import (
	"context"
	"net"
	"reflect"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/newtricks/newtricks/namenode-ext/nnhost"
	"github.com/newtricks/newtricks/namenode-ext/nnhosttest"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// host is every call of the host service in nnhost's types: what Client and FakeHost both offer.
type host interface {
	GetNamesystemState(ctx context.Context) (nnhost.NamesystemState, error)
	GetDatanodeReport(ctx context.Context) (nnhost.DatanodeReport, error)
	GetFileStatus(ctx context.Context, path string, who nnhost.Caller) (*nnhost.FileStatus, error)
	ListStatus(ctx context.Context, dir string, after []byte, limit int, who nnhost.Caller) (nnhost.ListPage, error)
	GetBlockLocations(ctx context.Context, path string, length int64, who nnhost.Caller) (nnhost.LocatedBlocks, error)
	CheckAccess(ctx context.Context, paths []string, action string, who nnhost.Caller) ([]nnhost.AccessResult, error)
	GetQuotaUsage(ctx context.Context, paths []string) ([]nnhost.QuotaDir, error)
	InspectFiles(ctx context.Context, req nnhost.InspectRequest) ([]nnhost.FileInspection, error)
	SetReplications(ctx context.Context, changes []nnhost.ReplicationChange, who nnhost.Caller) ([]nnhost.ReplicationResult, error)
	GetXAttrs(ctx context.Context, path string, who nnhost.Caller) (map[string][]byte, error)
	SetXAttr(ctx context.Context, path, name string, value []byte, who nnhost.Caller) error
	RemoveXAttr(ctx context.Context, path, name string, who nnhost.Caller) error
	Reconfigure(ctx context.Context, key, value string) (string, error)
	SetBalancedReads(ctx context.Context, paths []string) (bool, error)
}

var (
	_ host = (*nnhost.Client)(nil)
	_ host = (*nnhosttest.FakeHost)(nil)
)

// world is a namespace with a quota, an owner-only file, an xattr and placed replicas.
func world() *nnhosttest.FakeHost {
	h := nnhosttest.NewFakeHost(5)
	h.Mkdir("/q", "alice", 1<<20)
	h.File("/q/a", "alice", 300, 2)
	h.File("/q/b", "alice", 10, 3)
	h.Hide("/q/b")
	h.SetPlaced("/q/a", 1)
	h.SetLoad(7, 11)
	h.SetSpace(1<<40, 1<<30)
	h.SetOpen("/q/a", true)
	h.SetXAttrRaw("/q/a", "user.newtricks.m", []byte("v"))
	return h
}

// TestClientConvertsEveryField: each call through Client, gRPC and the fake's gRPC form gives
// what the same call on the fake gives directly, so no field is lost on the way, in a request
// (it would change the fake's answer) or an answer; errors keep their code.
func TestClientConvertsEveryField(t *testing.T) {
	direct, wired := world(), world()
	lis := bufconn.Listen(1 << 20)
	s := grpc.NewServer()
	nnhosttest.Register(s, wired)
	go func() { _ = s.Serve(lis) }()
	defer s.Stop()
	conn, err := grpc.NewClient("passthrough:///host", grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := nnhost.New(pb.NewNameNodeHostClient(conn))
	ctx := context.Background()
	st, err := direct.GetFileStatus(ctx, "/q/a", nnhost.AsService)
	if err != nil {
		t.Fatal(err)
	}
	alice, bob := nnhost.AsUser("alice"), nnhost.AsUser("bob")
	change := []nnhost.ReplicationChange{
		{Path: nnhost.InodePath(st.FileID), Replication: 4, Expect: 2, SetXattr: "user.newtricks.m", XattrValue: []byte("in"),
			FinalXattrValue: []byte("out")},
		{Path: "/q/b", Expect: 9, RemoveXattr: "user.newtricks.m"},
		{Path: "/nope", Replication: 1},
	}
	calls := []struct {
		name string
		call func(h host) (any, error)
	}{
		{"GetNamesystemState", func(h host) (any, error) { return h.GetNamesystemState(ctx) }},
		{"GetDatanodeReport", func(h host) (any, error) { return h.GetDatanodeReport(ctx) }},
		{"GetFileStatus", func(h host) (any, error) { return h.GetFileStatus(ctx, "/q/a", alice) }},
		{"GetFileStatus missing", func(h host) (any, error) { return h.GetFileStatus(ctx, "/nope", alice) }},
		{"GetFileStatus no caller", func(h host) (any, error) { return h.GetFileStatus(ctx, "/q/a", nnhost.Caller{}) }},
		{"ListStatus", func(h host) (any, error) { return h.ListStatus(ctx, "/q", nil, 0, alice) }},
		{"ListStatus page", func(h host) (any, error) { return h.ListStatus(ctx, "/q", []byte("a"), 1, alice) }},
		{"ListStatus service", func(h host) (any, error) { return h.ListStatus(ctx, "/q", nil, 0, nnhost.AsService) }},
		{"GetBlockLocations", func(h host) (any, error) { return h.GetBlockLocations(ctx, "/q/a", 1, alice) }},
		{"GetBlockLocations denied", func(h host) (any, error) { return h.GetBlockLocations(ctx, "/q/b", 0, bob) }},
		{"CheckAccess", func(h host) (any, error) { return h.CheckAccess(ctx, []string{"/q/a", "/nope"}, "WRITE", bob) }},
		{"GetQuotaUsage", func(h host) (any, error) { return h.GetQuotaUsage(ctx, []string{"/q/a", "/q/b", "/nope"}) }},
		{"InspectFiles", func(h host) (any, error) {
			return h.InspectFiles(ctx, nnhost.InspectRequest{FileIDs: []int64{st.FileID, 1}, Xattr: "user.newtricks.m",
				Want: []int{2, 1}, FromBlock: []int{1, 0}, Holders: true})
		}},
		{"SetReplications", func(h host) (any, error) { return h.SetReplications(ctx, change, alice) }},
		{"InspectFiles after", func(h host) (any, error) {
			return h.InspectFiles(ctx, nnhost.InspectRequest{FileIDs: []int64{st.FileID}, Xattr: "user.newtricks.m"})
		}},
		{"SetReplications service", func(h host) (any, error) { return h.SetReplications(ctx, change[1:], nnhost.AsService) }},
		{"SetXAttr", func(h host) (any, error) {
			return nil, h.SetXAttr(ctx, "/q", "user.newtricks.r", []byte{0, 1, 2}, nnhost.AsService)
		}},
		{"SetXAttr outside the prefix", func(h host) (any, error) {
			return nil, h.SetXAttr(ctx, "/q", "user.other", []byte{1}, nnhost.AsService)
		}},
		{"GetXAttrs", func(h host) (any, error) { return h.GetXAttrs(ctx, "/q", nnhost.AsService) }},
		{"RemoveXAttr", func(h host) (any, error) { return nil, h.RemoveXAttr(ctx, "/q", "user.newtricks.r", nnhost.AsService) }},
		{"RemoveXAttr absent", func(h host) (any, error) { return nil, h.RemoveXAttr(ctx, "/q", "user.newtricks.r", nnhost.AsService) }},
		{"Reconfigure", func(h host) (any, error) { return h.Reconfigure(ctx, "dfs.namenode.replication.max-streams", "9") }},
		{"SetBalancedReads", func(h host) (any, error) { return h.SetBalancedReads(ctx, []string{"/q/a"}) }},
	}
	for _, c := range calls {
		want, werr := c.call(direct)
		got, gerr := c.call(client)
		if status.Code(gerr) != status.Code(werr) || (werr != nil && status.Convert(gerr).Message() != status.Convert(werr).Message()) {
			t.Errorf("%s: error %v, want %v", c.name, gerr, werr)
			continue
		}
		if werr == nil && !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %#v\nwant %#v", c.name, got, want)
		}
	}
	if direct.Rep("/q/a") != 4 || wired.Rep("/q/a") != 4 || direct.Conf("dfs.namenode.replication.max-streams") != "9" ||
		wired.Conf("dfs.namenode.replication.max-streams") != "9" || !reflect.DeepEqual(direct.Balanced(), wired.Balanced()) {
		t.Fatalf("changes not applied alike: factors %d %d", direct.Rep("/q/a"), wired.Rep("/q/a"))
	}
	if v, _ := wired.XAttr("/q/a", "user.newtricks.m"); string(v) != "out" {
		t.Fatalf("settled marker %q, want out", v)
	}
	// A transport failure reaches the caller as the gRPC error it is.
	s.Stop()
	if _, err := client.GetNamesystemState(ctx); status.Code(err) != codes.Unavailable {
		t.Fatalf("host gone: %v, want UNAVAILABLE", err)
	}
}
