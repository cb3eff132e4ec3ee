package dnext

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/newtricks/newtricks/datanode-ext/offload"
	rep "github.com/newtricks/newtricks/datanode-ext/replica"
	"github.com/newtricks/newtricks/internal/authn"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// reportingDataNode is fakeDataNode that records the bad blocks reported to it.
type reportingDataNode struct {
	fakeDataNode
	mu      sync.Mutex
	reports []*pb.ReportBadBlockRequest
}

func (r *reportingDataNode) ReportBadBlock(_ context.Context, req *pb.ReportBadBlockRequest) (*pb.ReportBadBlockResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reports = append(r.reports, req)
	return &pb.ReportBadBlockResponse{}, nil
}

// TestReplicasReadVerifies: Replicas.Read answers without the replica's path, serves bytes only
// after they passed the block's checksums, and answers a corrupt replica with UNAVAILABLE
// (read another replica) after reporting it to the DataNode once; no error names the file.
func TestReplicasReadVerifies(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "blk_1")
	if err := os.WriteFile(p, []byte("data"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p+".meta", rep.Meta([]byte("data"), rep.TypeCRC32C, 512), 0o600); err != nil {
		t.Fatal(err)
	}
	dn := &reportingDataNode{fakeDataNode: fakeDataNode{path: p}}
	lis := bufconn.Listen(1 << 20)
	hs := grpc.NewServer()
	pb.RegisterDataNodeHostServer(hs, dn)
	go func() { _ = hs.Serve(lis) }()
	t.Cleanup(hs.Stop)
	conn, err := grpc.NewClient("passthrough:///host", grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	host := offload.GRPCHost{Client: pb.NewDataNodeHostClient(conn)}
	mgr, err := offload.NewManager(offload.Config{}, offload.Options{Host: host})
	if err != nil {
		t.Fatal(err)
	}
	api := &replicasAPI{host: host, reads: mgr, cfg: Config{MaxReadBytes: 1 << 20}, uuid: func() string { return "dn" }}
	ctx := authn.NewContext(context.Background(), authn.Identity{Method: authn.MethodSimple}, "10.0.0.1:1", nil)
	req := &pb.ReadReplicaRequest{Block: &pb.LocatedBlock{BlockPoolId: "bp", BlockId: 1, Token: &pb.Token{Identifier: []byte("ok")}}, User: "alice", IncludeData: true}
	resp, err := api.Read(ctx, req)
	if err != nil || string(resp.GetData()) != "data" || resp.GetPath() != "" || resp.GetNumBytes() != 4 {
		t.Fatalf("good replica: %v %v; want its 4 bytes and no path", resp, err)
	}
	if err := os.WriteFile(p, []byte("dat4"), 0o600); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		_, err = api.Read(ctx, req)
		if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "checksum of chunk 0") ||
			!strings.Contains(err.Error(), "read another replica") || strings.Contains(err.Error(), dir) {
			t.Fatalf("corrupt replica: %v, want Unavailable naming the checksum, no path", err)
		}
	}
	dn.mu.Lock()
	defer dn.mu.Unlock()
	if len(dn.reports) != 1 || dn.reports[0].GetBlockId() != 1 || dn.reports[0].GetBlockPoolId() != "bp" {
		t.Errorf("reports %v, want block 1 once", dn.reports)
	}
	if c := mgr.Counters(); c.CorruptReplicas != 1 || c.BadBlocksReported != 1 {
		t.Errorf("counters %+v", c)
	}
}
