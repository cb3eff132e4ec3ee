package nnext

import (
	"context"
	"fmt"
	"path"
	"strings"

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
