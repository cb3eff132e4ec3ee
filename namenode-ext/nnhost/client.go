package nnhost

import (
	"context"

	"google.golang.org/grpc/codes"

	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// Client is the NameNode hook's host service in nnhost's types: each method is one call of the
// generated client, converted both ways. It satisfies the host interfaces of hotspot and
// mirror. Errors are returned as the gRPC client returned them.
type Client struct {
	rpc pb.NameNodeHostClient
}

// New wraps the generated client of the hook's host service.
func New(rpc pb.NameNodeHostClient) *Client { return &Client{rpc: rpc} }

// GetNamesystemState returns the NameNode's state.
func (c *Client) GetNamesystemState(ctx context.Context) (NamesystemState, error) {
	ns, err := c.rpc.GetNamesystemState(ctx, &pb.GetNamesystemStateRequest{})
	if err != nil {
		return NamesystemState{}, err
	}
	return NamesystemState{Active: ns.Active, SafeMode: ns.SafeMode, LiveDatanodes: int(ns.LiveDatanodes), Superuser: ns.Superuser}, nil
}

// GetDatanodeReport returns the live DataNodes and the replication backlog.
func (c *Client) GetDatanodeReport(ctx context.Context) (DatanodeReport, error) {
	rep, err := c.rpc.GetDatanodeReport(ctx, &pb.GetDatanodeReportRequest{})
	if err != nil {
		return DatanodeReport{}, err
	}
	out := DatanodeReport{PendingReconstruction: rep.PendingReconstruction, UnderReplicated: rep.UnderReplicated}
	for _, d := range rep.Live {
		out.Live = append(out.Live, DatanodeLoad{UUID: d.Uuid, Xceivers: int(d.Xceivers), Capacity: d.Capacity,
			Remaining: d.Remaining, AdminState: d.AdminState})
	}
	return out, nil
}

// GetFileStatus stats path as who.
func (c *Client) GetFileStatus(ctx context.Context, path string, who Caller) (*FileStatus, error) {
	st, err := c.rpc.GetFileStatus(ctx, &pb.GetFileStatusRequest{Path: path, User: who.User, Service: who.Service})
	if err != nil {
		return nil, err
	}
	return fileStatus(st), nil
}

// ListStatus returns one page of dir as who (user only): at most limit entries (0: the host's
// bound, newtricks.host.list.max-entries) after the local name after (nil: from the first).
// The host never answers a whole directory at once; callers page while HasMore, asking again
// with after = LastName.
func (c *Client) ListStatus(ctx context.Context, dir string, after []byte, limit int, who Caller) (ListPage, error) {
	resp, err := c.rpc.ListStatus(ctx, &pb.ListStatusRequest{Path: dir, User: who.User, Service: who.Service,
		StartAfter: after, Limit: int32(max(0, min(limit, 1<<30)))})
	if err != nil {
		return ListPage{}, err
	}
	out := ListPage{Entries: make([]*FileStatus, 0, len(resp.Entries)), HasMore: resp.HasMore, LastName: resp.LastName}
	for _, e := range resp.Entries {
		out.Entries = append(out.Entries, fileStatus(e))
	}
	return out, nil
}

func fileStatus(st *pb.FileStatus) *FileStatus {
	return &FileStatus{Path: st.Path, Length: st.Length, IsDir: st.IsDir, Replication: int(st.Replication),
		BlockSize: st.BlockSize, MtimeMs: st.MtimeMs, Owner: st.Owner, Group: st.Group, Permission: st.Permission,
		FileID: st.FileId}
}

// GetBlockLocations returns the blocks of path's first length bytes (0: the whole file) as who;
// a service answer carries no block tokens.
func (c *Client) GetBlockLocations(ctx context.Context, path string, length int64, who Caller) (LocatedBlocks, error) {
	lb, err := c.rpc.GetBlockLocations(ctx, &pb.GetBlockLocationsRequest{Path: path, Length: length, User: who.User, Service: who.Service})
	if err != nil {
		return LocatedBlocks{}, err
	}
	out := LocatedBlocks{FileLength: lb.FileLength, UnderConstruction: lb.UnderConstruction}
	for _, b := range lb.Blocks {
		ob := LocatedBlock{BlockID: b.BlockId}
		for _, l := range b.Locations {
			ob.Locations = append(ob.Locations, l.Uuid)
		}
		out.Blocks = append(out.Blocks, ob)
	}
	return out, nil
}

// CheckAccess checks action ("WRITE", "READ"...) on every path as who (user only), one result
// per path in order.
func (c *Client) CheckAccess(ctx context.Context, paths []string, action string, who Caller) ([]AccessResult, error) {
	resp, err := c.rpc.CheckAccess(ctx, &pb.CheckAccessRequest{Paths: paths, Action: action, User: who.User, Service: who.Service})
	if err != nil {
		return nil, err
	}
	out := make([]AccessResult, 0, len(resp.Results))
	for _, r := range resp.Results {
		out = append(out, AccessResult{Code: codes.Code(r.Code), Message: r.Message})
	}
	return out, nil
}

// GetQuotaUsage returns every ancestor directory with a quota of each path, deduplicated
// (service only).
func (c *Client) GetQuotaUsage(ctx context.Context, paths []string) ([]QuotaDir, error) {
	resp, err := c.rpc.GetQuotaUsage(ctx, &pb.GetQuotaUsageRequest{Paths: paths, Service: true})
	if err != nil {
		return nil, err
	}
	out := make([]QuotaDir, 0, len(resp.Dirs))
	for _, d := range resp.Dirs {
		out = append(out, QuotaDir{Path: d.Path, SpaceQuota: d.SpaceQuota, SpaceConsumed: d.SpaceConsumed})
	}
	return out, nil
}

// InspectFiles reports files by inode id, in request order (service only).
func (c *Client) InspectFiles(ctx context.Context, req InspectRequest) ([]FileInspection, error) {
	in := &pb.InspectFilesRequest{FileIds: req.FileIDs, Xattr: req.Xattr, Holders: req.Holders, Service: true}
	for _, w := range req.Want {
		in.Want = append(in.Want, int32(w))
	}
	for _, b := range req.FromBlock {
		in.FromBlock = append(in.FromBlock, int32(b))
	}
	resp, err := c.rpc.InspectFiles(ctx, in)
	if err != nil {
		return nil, err
	}
	out := make([]FileInspection, 0, len(resp.Files))
	for _, f := range resp.Files {
		out = append(out, FileInspection{FileID: f.FileId, Exists: f.Exists, Path: f.Path, Replication: int(f.Replication),
			Length: f.Length, Blocks: int(f.Blocks), MinLiveReplicas: int(f.MinLiveReplicas), FirstShortBlock: int(f.FirstShortBlock),
			HasXattr: f.HasXattr, Xattr: f.Xattr, Holders: f.Holders})
	}
	return out, nil
}

// SetReplications applies a batch of changes as who, one result per change in order.
func (c *Client) SetReplications(ctx context.Context, changes []ReplicationChange, who Caller) ([]ReplicationResult, error) {
	in := &pb.SetReplicationsRequest{User: who.User, Service: who.Service}
	for _, ch := range changes {
		in.Changes = append(in.Changes, &pb.ReplicationChange{Path: ch.Path, Replication: int32(ch.Replication),
			Expect: int32(ch.Expect), SetXattr: ch.SetXattr, XattrValue: ch.XattrValue, RemoveXattr: ch.RemoveXattr,
			FinalXattrValue: ch.FinalXattrValue})
	}
	resp, err := c.rpc.SetReplications(ctx, in)
	if err != nil {
		return nil, err
	}
	out := make([]ReplicationResult, 0, len(resp.Results))
	for _, r := range resp.Results {
		out = append(out, ReplicationResult{Code: codes.Code(r.Code), Message: r.Message, Before: int(r.Before), Changed: r.Changed})
	}
	return out, nil
}

// GetXAttrs returns every xattr of path as who (a service call: only those under the
// service prefixes).
func (c *Client) GetXAttrs(ctx context.Context, path string, who Caller) (map[string][]byte, error) {
	resp, err := c.rpc.GetXAttrs(ctx, &pb.GetXAttrsRequest{Path: path, User: who.User, Service: who.Service})
	if err != nil {
		return nil, err
	}
	return resp.Xattrs, nil
}

// SetXAttr sets one xattr of path as who.
func (c *Client) SetXAttr(ctx context.Context, path, name string, value []byte, who Caller) error {
	_, err := c.rpc.SetXAttr(ctx, &pb.SetXAttrRequest{Path: path, Name: name, Value: value, User: who.User, Service: who.Service})
	return err
}

// RemoveXAttr removes one xattr of path as who.
func (c *Client) RemoveXAttr(ctx context.Context, path, name string, who Caller) error {
	_, err := c.rpc.RemoveXAttr(ctx, &pb.RemoveXAttrRequest{Path: path, Name: name, User: who.User, Service: who.Service})
	return err
}

// Reconfigure sets a runtime-reconfigurable NameNode property ("" restores the default) and
// returns the value it replaced (service only).
func (c *Client) Reconfigure(ctx context.Context, key, value string) (string, error) {
	resp, err := c.rpc.Reconfigure(ctx, &pb.ReconfigureRequest{Key: key, Value: value, Service: true})
	if err != nil {
		return "", err
	}
	return resp.OldValue, nil
}

// SetBalancedReads replaces the set of paths whose readers the hook's BalancedReads topology
// spreads over the replicas, and reports whether that topology is installed.
func (c *Client) SetBalancedReads(ctx context.Context, paths []string) (bool, error) {
	resp, err := c.rpc.SetBalancedReads(ctx, &pb.SetBalancedReadsRequest{Paths: paths, Service: true})
	if err != nil {
		return false, err
	}
	return resp.TopologyInstalled, nil
}
