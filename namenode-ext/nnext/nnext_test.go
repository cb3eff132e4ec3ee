package nnext

import (
	"context"
	"net"
	"path/filepath"
	"testing"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/newtricks/newtricks/internal/coproc"
	"github.com/newtricks/newtricks/namenode-ext/nnhosttest"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// aliceFile is the NameNode hook's host service holding one file, /data/f, that only alice
// may read.
func aliceFile() *nnhosttest.FakeHost {
	h := nnhosttest.NewFakeHost(3)
	h.File("/data/f", "alice", 10, 3)
	h.Hide("/data/f")
	return h
}

func TestConfigureServesNamespaceAPI(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "host.sock")
	lis, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	hs := grpc.NewServer()
	nnhosttest.Register(hs, aliceFile())
	go hs.Serve(lis)
	defer hs.Stop()

	ext := New()
	cp := coproc.New(Options, ext, hclog.NewNullLogger())
	ctx := context.Background()
	if st, _ := cp.Status(ctx, &pb.StatusRequest{}); !st.GetHealthy() || st.GetConfigured() {
		t.Fatalf("before Configure: %v", st)
	}
	resp, err := cp.Configure(ctx, &pb.ConfigureRequest{DaemonKind: "namenode", HostAddress: "unix://" + sock,
		Conf: map[string]string{Prefix + ".api.address": "127.0.0.1:0", Prefix + ".metrics.address": "",
			Prefix + ".events.subscribe": "CLOSE,audit:open", Prefix + ".events.subscribe.prefixes": "/ckpt/"}})
	if err != nil {
		t.Fatal(err)
	}
	// The answer tells the hook what to forward: nothing else is sent.
	if f := resp.GetEvents(); len(f.GetAuditCommands()) != 1 || f.GetAuditCommands()[0] != "open" ||
		len(f.GetNamespaceTypes()) != 1 || f.GetNamespaceTypes()[0] != pb.NamespaceEvent_CLOSE ||
		len(f.GetNamespacePathPrefixes()) != 1 || f.GetNamespacePathPrefixes()[0] != "/ckpt/" {
		t.Fatalf("Configure answered event filter %v", resp.GetEvents())
	}
	if _, err := cp.Configure(ctx, &pb.ConfigureRequest{HostAddress: "unix://" + sock}); err != nil {
		t.Fatalf("second Configure: %v", err)
	}
	cc, err := grpc.NewClient(resp.GetApiAddress(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ns := pb.NewNamespaceClient(cc)
	tests := []struct {
		path, user string
		want       codes.Code
	}{
		{"/data/f", "alice", codes.OK},
		{"/data/f", "bob", codes.PermissionDenied},
		{"data/f", "alice", codes.InvalidArgument},
		{"/data/../f", "alice", codes.InvalidArgument},
		{"/data/f", "", codes.InvalidArgument},
	}
	for _, tc := range tests {
		_, err := ns.Locate(ctx, &pb.LocateRequest{Path: tc.path, User: tc.user})
		if got := status.Code(err); got != tc.want {
			t.Errorf("Locate(%q, %q) = %v, want %v", tc.path, tc.user, err, tc.want)
		}
	}
	if _, err := ns.RecentEvents(ctx, &pb.RecentEventsRequest{Limit: -1}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("RecentEvents(limit -1) = %v, want InvalidArgument", err)
	}
	if st, _ := cp.Status(ctx, &pb.StatusRequest{}); !st.GetConfigured() || st.GetLastTxid() != -1 {
		t.Fatalf("after Configure: %v", st)
	}
}

func TestConfigureRejectsBadConfig(t *testing.T) {
	cp := coproc.New(Options, New(), hclog.NewNullLogger())
	_, err := cp.Configure(context.Background(), &pb.ConfigureRequest{HostAddress: "unix:///nonexistent",
		Conf: map[string]string{Prefix + ".events.retain": "zero"}})
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("Configure with a bad key = %v, want InvalidArgument", err)
	}
	for _, bad := range []map[string]string{
		{Prefix + ".events.subscribe": "close"},
		{Prefix + ".events.subscribe.prefixes": "ckpt"},
	} {
		if _, err := cp.Configure(context.Background(), &pb.ConfigureRequest{HostAddress: "unix:///nonexistent", Conf: bad}); status.Code(err) != codes.InvalidArgument {
			t.Errorf("Configure with %v = %v, want InvalidArgument", bad, err)
		}
	}
	if _, err := cp.Configure(context.Background(), &pb.ConfigureRequest{}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("Configure without host = %v, want InvalidArgument", err)
	}
}
