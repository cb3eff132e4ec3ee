package nnext

import (
	"context"
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/proto"

	"github.com/newtricks/newtricks/internal/authn"
	"github.com/newtricks/newtricks/namenode-ext/events"
	"github.com/newtricks/newtricks/namenode-ext/nnhosttest"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// FuzzNamespaceRequests decodes arbitrary bytes as each public Namespace request, as the gRPC
// edge would, and runs the handler under each kind of caller: it must answer with a status
// (never panic), and nobody but alice may get alice's blocks.
func FuzzNamespaceRequests(f *testing.F) {
	lis := bufconn.Listen(1 << 20)
	hs := grpc.NewServer()
	nnhosttest.Register(hs, aliceFile())
	go func() { _ = hs.Serve(lis) }()
	f.Cleanup(hs.Stop)
	conn, err := grpc.NewClient("passthrough:///host", grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { conn.Close() })
	api := &namespaceAPI{host: pb.NewNameNodeHostClient(conn), sink: events.NewSink(16, 0)}
	callers := []context.Context{
		context.Background(), // no interceptor ran
		authn.NewContext(context.Background(), authn.Identity{Method: authn.MethodSimple}, "10.0.0.1:1", nil),
		authn.NewContext(context.Background(), authn.Identity{User: "bob", Method: authn.MethodKerberos}, "10.0.0.1:1", nil),
	}
	for _, seed := range []proto.Message{
		&pb.LocateRequest{Path: "/data/f", User: "alice"}, &pb.LocateRequest{Path: "data/../f"},
		&pb.RecentEventsRequest{Limit: -1, PathPrefix: "/"},
		&pb.LocateBatchRequest{Paths: []string{"/data/f", "/data/g"}, User: "alice"},
	} {
		b, _ := proto.Marshal(seed)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for i, ctx := range callers {
			var loc pb.LocateRequest
			if proto.Unmarshal(b, &loc) == nil {
				_, err := api.Locate(ctx, &loc)
				if _, ok := status.FromError(err); !ok {
					t.Fatalf("Locate(%v): error without a status: %v", &loc, err)
				}
				if i != 1 && err == nil {
					t.Fatalf("caller %d got alice's blocks with %v", i, &loc)
				}
			}
			var batch pb.LocateBatchRequest
			if proto.Unmarshal(b, &batch) == nil {
				_, err := api.LocateBatch(ctx, &batch)
				if _, ok := status.FromError(err); !ok {
					t.Fatalf("LocateBatch(%v): error without a status: %v", &batch, err)
				}
				if i != 1 && err == nil {
					t.Fatalf("caller %d got alice's blocks with %v", i, &batch)
				}
			}
			var ev pb.RecentEventsRequest
			if proto.Unmarshal(b, &ev) == nil {
				_, err := api.RecentEvents(ctx, &ev)
				if i != 1 && status.Code(err) == codes.OK {
					t.Fatalf("caller %d read RecentEvents", i)
				}
			}
		}
	})
}
