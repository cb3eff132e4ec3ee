package nnext

import (
	"context"
	"fmt"
	"path"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/newtricks/newtricks/internal/authn"
	"github.com/newtricks/newtricks/internal/coproc"
	"github.com/newtricks/newtricks/namenode-ext/events"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// namespaceAPI implements the public Namespace service.
type namespaceAPI struct {
	pb.UnimplementedNamespaceServer
	host pb.NameNodeHostClient
	sink *events.Sink
}

// checkPath rejects what HDFS would reject later with a less useful message.
func checkPath(p string) error {
	if p == "" || !strings.HasPrefix(p, "/") {
		return fmt.Errorf("%w: path %q must be absolute", coproc.ErrInvalid, p)
	}
	if path.Clean(p) != p && p != "/" {
		return fmt.Errorf("%w: path %q is not clean (use %q)", coproc.ErrInvalid, p, path.Clean(p))
	}
	return nil
}

// Locate asks the NameNode, as the user, for the file's blocks and their access tokens.
func (a *namespaceAPI) Locate(ctx context.Context, req *pb.LocateRequest) (*pb.LocatedBlocks, error) {
	if err := checkPath(req.GetPath()); err != nil {
		return nil, coproc.ToStatus(err)
	}
	// Tokens are issued only to the caller's own (authenticated) identity.
	user, err := authn.ActAs(ctx, req.GetUser())
	if err != nil {
		return nil, coproc.ToStatus(err)
	}
	lb, err := a.host.GetBlockLocations(ctx, &pb.GetBlockLocationsRequest{Path: req.GetPath(), User: user})
	if err != nil {
		return nil, coproc.ToStatus(fmt.Errorf("locate %s: %w", req.GetPath(), err))
	}
	return lb, nil
}

// Limits of LocateBatch: paths per call, the answer's size budget (it stops early past it;
// the caller asks again for the rest) and how many NameNode look-ups run at once (the
// daemon's host-call admission, newtricks.host.handlers, is 8 by default).
const (
	MaxLocateBatch    = 1024
	locateBatchBudget = 16 << 20
	locateParallel    = 4
)

// LocateBatch is Locate for many files: the same checks, as the user, file by file, answering
// the first files in order (at least one) within locateBatchBudget.
func (a *namespaceAPI) LocateBatch(ctx context.Context, req *pb.LocateBatchRequest) (*pb.LocateBatchResponse, error) {
	paths := req.GetPaths()
	if len(paths) == 0 || len(paths) > MaxLocateBatch {
		return nil, coproc.ToStatus(fmt.Errorf("%w: %d paths, want 1..%d", coproc.ErrInvalid, len(paths), MaxLocateBatch))
	}
	for i, p := range paths {
		if err := checkPath(p); err != nil {
			return nil, coproc.ToStatus(fmt.Errorf("path %d: %w", i, err))
		}
	}
	user, err := authn.ActAs(ctx, req.GetUser())
	if err != nil {
		return nil, coproc.ToStatus(err)
	}
	resp := &pb.LocateBatchResponse{}
	size := 0
	for lo := 0; lo < len(paths); lo += locateParallel {
		chunk := paths[lo:min(lo+locateParallel, len(paths))]
		out := make([]*pb.LocatedBlocks, len(chunk))
		errs := make([]error, len(chunk))
		var wg sync.WaitGroup
		for i, p := range chunk {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out[i], errs[i] = a.host.GetBlockLocations(ctx, &pb.GetBlockLocationsRequest{Path: p, User: user})
			}()
		}
		wg.Wait()
		for i, lb := range out {
			if errs[i] != nil {
				return nil, coproc.ToStatus(fmt.Errorf("locate %s: %w", chunk[i], errs[i]))
			}
			n := proto.Size(lb)
			if len(resp.Files) > 0 && size+n > locateBatchBudget {
				return resp, nil
			}
			size += n
			resp.Files = append(resp.Files, lb)
		}
	}
	return resp, nil
}

// RecentEvents returns the newest events the sink retained.
func (a *namespaceAPI) RecentEvents(ctx context.Context, req *pb.RecentEventsRequest) (*pb.RecentEventsResponse, error) {
	// Every user's paths and client addresses: administrators only (authn.RequireAdminView).
	if err := authn.RequireAdminView(ctx); err != nil {
		return nil, coproc.ToStatus(err)
	}
	if req.GetLimit() < 0 {
		return nil, coproc.ToStatus(fmt.Errorf("%w: limit %d is negative", coproc.ErrInvalid, req.GetLimit()))
	}
	last, _, dropped := a.sink.Stats()
	resp := &pb.RecentEventsResponse{LastTxid: last, AuditDroppedTotal: dropped}
	for _, e := range a.sink.Recent(int(req.GetLimit()), req.GetPathPrefix()) {
		resp.Events = append(resp.Events, events.ToRecord(e))
	}
	return resp, nil
}
