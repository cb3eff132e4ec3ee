package nsclient

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// batchNS answers LocateBatch with at most n files per call (n < 0: Unimplemented, an older
// namenode-ext) and records the batches it was asked.
type batchNS struct {
	pb.NamespaceClient
	n      int
	asked  []int
	locate int
	over   bool // answer more files than asked
}

func (b *batchNS) LocateBatch(_ context.Context, r *pb.LocateBatchRequest, _ ...grpc.CallOption) (*pb.LocateBatchResponse, error) {
	if b.n < 0 {
		return nil, status.Error(codes.Unimplemented, "unknown method")
	}
	b.asked = append(b.asked, len(r.GetPaths()))
	out := &pb.LocateBatchResponse{}
	k := min(b.n, len(r.GetPaths()))
	if b.over {
		k = len(r.GetPaths()) + 1
	}
	for i := 0; i < k; i++ {
		p := r.GetPaths()[min(i, len(r.GetPaths())-1)]
		if strings.HasSuffix(p, "/denied") {
			return nil, status.Errorf(codes.PermissionDenied, "locate %s: Permission denied: user=%s", p, r.GetUser())
		}
		out.Files = append(out.Files, &pb.LocatedBlocks{FileLength: int64(len(p))})
	}
	return out, nil
}

func (b *batchNS) Locate(_ context.Context, r *pb.LocateRequest, _ ...grpc.CallOption) (*pb.LocatedBlocks, error) {
	b.locate++
	return &pb.LocatedBlocks{FileLength: int64(len(r.GetPath()))}, nil
}

func TestLocateMany(t *testing.T) {
	var paths []string
	for i := 0; i < 2500; i++ {
		paths = append(paths, fmt.Sprintf("/d/%0*d", i%7+1, i))
	}
	check := func(name string, got []*pb.LocatedBlocks, err error) {
		t.Helper()
		if err != nil || len(got) != len(paths) {
			t.Fatalf("%s: %d files, %v", name, len(got), err)
		}
		for i, lb := range got {
			if lb.GetFileLength() != int64(len(paths[i])) {
				t.Fatalf("%s: file %d out of order", name, i)
			}
		}
	}
	full := &batchNS{n: MaxBatch}
	got, err := LocateMany(context.Background(), full, "alice", paths)
	check("full batches", got, err)
	if fmt.Sprint(full.asked) != "[1024 1024 452]" {
		t.Errorf("asked %v, want batches of at most %d", full.asked, MaxBatch)
	}
	early := &batchNS{n: 700} // the server stops early (its size budget)
	got, err = LocateMany(context.Background(), early, "alice", paths)
	check("early stops", got, err)
	if len(early.asked) != 4 {
		t.Errorf("asked %v", early.asked)
	}
	old := &batchNS{n: -1}
	got, err = LocateMany(context.Background(), old, "alice", paths)
	check("older namenode-ext", got, err)
	if old.locate != len(paths) {
		t.Errorf("%d Locate calls for %d files", old.locate, len(paths))
	}
	if _, err := LocateMany(context.Background(), &batchNS{n: 10}, "alice", []string{"/d/a", "/d/denied"}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("a refused file: %v, want namenode-ext's PermissionDenied", err)
	}
	if _, err := LocateMany(context.Background(), &batchNS{n: 0}, "alice", paths); !errors.Is(err, ErrBadAnswer) {
		t.Errorf("an empty answer: %v, want ErrBadAnswer (never a loop)", err)
	}
	if _, err := LocateMany(context.Background(), &batchNS{n: 10, over: true}, "alice", paths[:3]); !errors.Is(err, ErrBadAnswer) {
		t.Errorf("more answers than paths: %v, want ErrBadAnswer", err)
	}
}

type listDir struct {
	pb.DataNodeDirectoryClient
	nodes []*pb.DataNodeExt
}

func (d listDir) List(context.Context, *pb.ListDataNodeExtsRequest, ...grpc.CallOption) (*pb.ListDataNodeExtsResponse, error) {
	return &pb.ListDataNodeExtsResponse{Nodes: d.nodes}, nil
}

func TestListDropsWhatCannotBeDialed(t *testing.T) {
	eps, err := List(context.Background(), listDir{nodes: []*pb.DataNodeExt{
		{DatanodeUuid: "a", ApiAddress: "10.0.0.1:9890", Hostname: "dn1", Tls: true},
		{DatanodeUuid: "a", ApiAddress: "10.0.0.9:9890"}, // repeated UUID
		{DatanodeUuid: "b", ApiAddress: "10.0.0.2"},      // no port
		{DatanodeUuid: "c", ApiAddress: "10.0.0.3:0"},
		{DatanodeUuid: "", ApiAddress: "10.0.0.4:1"},
		{DatanodeUuid: "d", ApiAddress: "[::1]:9890"},
	}}, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(eps) != "[{a 10.0.0.1:9890 dn1  true} {d [::1]:9890   false}]" {
		t.Errorf("listed %v", eps)
	}
}
