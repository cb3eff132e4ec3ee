package coproc

import (
	"context"
	"net"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// panicky is an Extension whose Status panics the first time, as a handler with a bug on some
// request would; its Status stream analogue is Deliver (a client stream).
type panicky struct {
	pb.UnimplementedExtensionServer
	calls int
}

func (p *panicky) Status(context.Context, *pb.StatusRequest) (*pb.StatusResponse, error) {
	p.calls++
	if p.calls == 1 {
		var s []int
		_ = s[3] // index out of range
	}
	return &pb.StatusResponse{Healthy: true}, nil
}

// TestRecovery: a panicking unary handler fails that call with INTERNAL (no stack, no panic text
// to the caller), the server answers the next call, and the panic is counted. Without the
// interceptor the panic would end the test binary.
func TestRecovery(t *testing.T) {
	rec := &Recovery{}
	srv := grpc.NewServer(rec.ServerOptions()...)
	pb.RegisterExtensionServer(srv, &panicky{})
	lis := bufconn.Listen(1 << 20)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient("passthrough:///x", grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := pb.NewExtensionClient(conn)
	_, err = c.Status(context.Background(), &pb.StatusRequest{})
	if status.Code(err) != codes.Internal || strings.Contains(err.Error(), "index out of range") {
		t.Fatalf("panicking call: %v, want INTERNAL without the panic's text", err)
	}
	if r, err := c.Status(context.Background(), &pb.StatusRequest{}); err != nil || !r.GetHealthy() {
		t.Fatalf("next call: %v %v", r, err)
	}
	if rec.Panics.Load() != 1 {
		t.Errorf("%d panics counted, want 1", rec.Panics.Load())
	}
}
