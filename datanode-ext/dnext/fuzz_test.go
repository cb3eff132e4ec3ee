package dnext

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/proto"

	"github.com/newtricks/newtricks/datanode-ext/offload"
	rep "github.com/newtricks/newtricks/datanode-ext/replica"
	"github.com/newtricks/newtricks/internal/authn"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// fakeDataNode accepts only alice with the token "ok" for block 1 (the real check is the
// DataNode's block-token secret manager, exercised by the conformance tests).
type fakeDataNode struct {
	pb.UnimplementedDataNodeHostServer
	path string
}

func (f fakeDataNode) ReportBadBlock(context.Context, *pb.ReportBadBlockRequest) (*pb.ReportBadBlockResponse, error) {
	return nil, status.Error(codes.FailedPrecondition, "nothing is corrupt here")
}

func (f fakeDataNode) ResolveReplica(_ context.Context, r *pb.ResolveReplicaRequest) (*pb.Replica, error) {
	if r.GetUser() != "alice" || string(r.GetToken().GetIdentifier()) != "ok" || r.GetBlockId() != 1 {
		return nil, status.Error(codes.PermissionDenied, "Block token with ... doesn't belong to user")
	}
	return &pb.Replica{BlockPath: f.path, MetaPath: f.path + ".meta", NumBytes: 4, Finalized: true}, nil
}

// FuzzReadReplicaRequest decodes arbitrary bytes as a public Replicas.Read request and runs
// the handler under each kind of caller: a status always, and bytes only for alice's token.
func FuzzReadReplicaRequest(f *testing.F) {
	replica := filepath.Join(f.TempDir(), "blk_1")
	if err := os.WriteFile(replica, []byte("data"), 0o600); err != nil {
		f.Fatal(err)
	}
	if err := os.WriteFile(replica+".meta", rep.Meta([]byte("data"), rep.TypeCRC32C, 512), 0o600); err != nil {
		f.Fatal(err)
	}
	lis := bufconn.Listen(1 << 20)
	hs := grpc.NewServer()
	pb.RegisterDataNodeHostServer(hs, fakeDataNode{path: replica})
	go func() { _ = hs.Serve(lis) }()
	f.Cleanup(hs.Stop)
	conn, err := grpc.NewClient("passthrough:///host", grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { conn.Close() })
	host := offload.GRPCHost{Client: pb.NewDataNodeHostClient(conn)}
	mgr, err := offload.NewManager(offload.Config{}, offload.Options{Host: host})
	if err != nil {
		f.Fatal(err)
	}
	api := &replicasAPI{host: host, reads: mgr, cfg: Config{MaxReadBytes: 1 << 20}, uuid: func() string { return "dn" }}
	callers := []context.Context{
		context.Background(),
		authn.NewContext(context.Background(), authn.Identity{Method: authn.MethodSimple}, "10.0.0.1:1", nil),
		authn.NewContext(context.Background(), authn.Identity{User: "bob", Method: authn.MethodToken}, "10.0.0.1:1", nil),
	}
	for _, seed := range []*pb.ReadReplicaRequest{
		{Block: &pb.LocatedBlock{BlockPoolId: "bp", BlockId: 1, Token: &pb.Token{Identifier: []byte("ok")}}, User: "alice", IncludeData: true},
		{Block: &pb.LocatedBlock{BlockPoolId: "bp", BlockId: 1}},
		{},
	} {
		b, _ := proto.Marshal(seed)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var req pb.ReadReplicaRequest
		if proto.Unmarshal(b, &req) != nil {
			return
		}
		for i, ctx := range callers {
			resp, err := api.Read(ctx, &req)
			if _, ok := status.FromError(err); !ok {
				t.Fatalf("Read(%v): error without a status: %v", &req, err)
			}
			if err == nil && (i != 1 || req.GetUser() != "alice") {
				t.Fatalf("caller %d read a replica with %v", i, &req)
			}
			if err == nil && req.GetIncludeData() && string(resp.GetData()) != "data" {
				t.Fatalf("read %q", resp.GetData())
			}
			if resp.GetPath() != "" || strings.Contains(status.Convert(err).Message(), replica) {
				t.Fatalf("the answer names the replica's file: %v %v", resp, err)
			}
		}
	})
}
