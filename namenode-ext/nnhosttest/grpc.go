package nnhosttest

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/newtricks/newtricks/namenode-ext/nnhost"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// Register serves h as the NameNodeHost service on s, for code under test that dials the
// hook's host socket (nnext's Configure) and for nnhost.Client's own tests. Each call is
// converted to h's method and back; the calls h does not have (SetReplication,
// GetContentSummary) answer UNIMPLEMENTED.
func Register(s grpc.ServiceRegistrar, h *FakeHost) { pb.RegisterNameNodeHostServer(s, &server{h: h}) }

// server is the gRPC form of a FakeHost: the inverse of nnhost.Client's conversions.
type server struct {
	pb.UnimplementedNameNodeHostServer
	h *FakeHost
}

func caller(user string, service bool) nnhost.Caller {
	return nnhost.Caller{User: user, Service: service}
}

func fileStatusProto(st *nnhost.FileStatus) *pb.FileStatus {
	return &pb.FileStatus{Path: st.Path, Length: st.Length, IsDir: st.IsDir, Replication: int32(st.Replication),
		BlockSize: st.BlockSize, MtimeMs: st.MtimeMs, Owner: st.Owner, Group: st.Group, Permission: st.Permission,
		FileId: st.FileID}
}

func (s *server) GetFileStatus(ctx context.Context, in *pb.GetFileStatusRequest) (*pb.FileStatus, error) {
	st, err := s.h.GetFileStatus(ctx, in.Path, caller(in.User, in.Service))
	if err != nil {
		return nil, err
	}
	return fileStatusProto(st), nil
}

func (s *server) ListStatus(ctx context.Context, in *pb.ListStatusRequest) (*pb.ListStatusResponse, error) {
	page, err := s.h.ListStatus(ctx, in.Path, in.StartAfter, int(in.Limit), caller(in.User, in.Service))
	if err != nil {
		return nil, err
	}
	out := &pb.ListStatusResponse{HasMore: page.HasMore, LastName: page.LastName}
	for _, e := range page.Entries {
		out.Entries = append(out.Entries, fileStatusProto(e))
	}
	return out, nil
}

func (s *server) GetDatanodeReport(ctx context.Context, _ *pb.GetDatanodeReportRequest) (*pb.DatanodeReport, error) {
	rep, err := s.h.GetDatanodeReport(ctx)
	if err != nil {
		return nil, err
	}
	out := &pb.DatanodeReport{PendingReconstruction: rep.PendingReconstruction, UnderReplicated: rep.UnderReplicated}
	for _, d := range rep.Live {
		out.Live = append(out.Live, &pb.DatanodeLoad{Uuid: d.UUID, Xceivers: int32(d.Xceivers), Capacity: d.Capacity,
			Remaining: d.Remaining, AdminState: d.AdminState})
	}
	return out, nil
}

func (s *server) GetBlockLocations(ctx context.Context, in *pb.GetBlockLocationsRequest) (*pb.LocatedBlocks, error) {
	lb, err := s.h.GetBlockLocations(ctx, in.Path, in.Length, caller(in.User, in.Service))
	if err != nil {
		return nil, err
	}
	out := &pb.LocatedBlocks{FileLength: lb.FileLength, UnderConstruction: lb.UnderConstruction}
	for _, b := range lb.Blocks {
		ob := &pb.LocatedBlock{BlockId: b.BlockID}
		for _, u := range b.Locations {
			ob.Locations = append(ob.Locations, &pb.DatanodeRef{Uuid: u})
		}
		out.Blocks = append(out.Blocks, ob)
	}
	return out, nil
}

func (s *server) CheckAccess(ctx context.Context, in *pb.CheckAccessRequest) (*pb.CheckAccessResponse, error) {
	results, err := s.h.CheckAccess(ctx, in.Paths, in.Action, caller(in.User, in.Service))
	if err != nil {
		return nil, err
	}
	out := &pb.CheckAccessResponse{}
	for _, r := range results {
		out.Results = append(out.Results, &pb.AccessResult{Code: int32(r.Code), Message: r.Message})
	}
	return out, nil
}

func (s *server) GetXAttrs(ctx context.Context, in *pb.GetXAttrsRequest) (*pb.GetXAttrsResponse, error) {
	xa, err := s.h.GetXAttrs(ctx, in.Path, caller(in.User, in.Service))
	if err != nil {
		return nil, err
	}
	return &pb.GetXAttrsResponse{Xattrs: xa}, nil
}

func (s *server) SetXAttr(ctx context.Context, in *pb.SetXAttrRequest) (*pb.SetXAttrResponse, error) {
	if err := s.h.SetXAttr(ctx, in.Path, in.Name, in.Value, caller(in.User, in.Service)); err != nil {
		return nil, err
	}
	return &pb.SetXAttrResponse{}, nil
}

func (s *server) RemoveXAttr(ctx context.Context, in *pb.RemoveXAttrRequest) (*pb.RemoveXAttrResponse, error) {
	if err := s.h.RemoveXAttr(ctx, in.Path, in.Name, caller(in.User, in.Service)); err != nil {
		return nil, err
	}
	return &pb.RemoveXAttrResponse{}, nil
}

func (s *server) Reconfigure(ctx context.Context, in *pb.ReconfigureRequest) (*pb.ReconfigureResponse, error) {
	if err := checkCaller("Reconfigure", caller("", in.Service), serviceOnly); err != nil {
		return nil, err
	}
	old, err := s.h.Reconfigure(ctx, in.Key, in.Value)
	if err != nil {
		return nil, err
	}
	return &pb.ReconfigureResponse{OldValue: old}, nil
}

func (s *server) GetNamesystemState(ctx context.Context, _ *pb.GetNamesystemStateRequest) (*pb.NamesystemState, error) {
	ns, err := s.h.GetNamesystemState(ctx)
	if err != nil {
		return nil, err
	}
	return &pb.NamesystemState{Active: ns.Active, SafeMode: ns.SafeMode, LiveDatanodes: int32(ns.LiveDatanodes), Superuser: ns.Superuser}, nil
}

func (s *server) GetQuotaUsage(ctx context.Context, in *pb.GetQuotaUsageRequest) (*pb.GetQuotaUsageResponse, error) {
	if err := checkCaller("GetQuotaUsage", caller("", in.Service), serviceOnly); err != nil {
		return nil, err
	}
	dirs, err := s.h.GetQuotaUsage(ctx, in.Paths)
	if err != nil {
		return nil, err
	}
	out := &pb.GetQuotaUsageResponse{}
	for _, d := range dirs {
		out.Dirs = append(out.Dirs, &pb.QuotaDir{Path: d.Path, SpaceQuota: d.SpaceQuota, SpaceConsumed: d.SpaceConsumed, NsQuota: -1})
	}
	return out, nil
}

func (s *server) InspectFiles(ctx context.Context, in *pb.InspectFilesRequest) (*pb.InspectFilesResponse, error) {
	if err := checkCaller("InspectFiles", caller("", in.Service), serviceOnly); err != nil {
		return nil, err
	}
	req := nnhost.InspectRequest{FileIDs: in.FileIds, Xattr: in.Xattr, Holders: in.Holders}
	for _, w := range in.Want {
		req.Want = append(req.Want, int(w))
	}
	for _, b := range in.FromBlock {
		req.FromBlock = append(req.FromBlock, int(b))
	}
	files, err := s.h.InspectFiles(ctx, req)
	if err != nil {
		return nil, err
	}
	out := &pb.InspectFilesResponse{}
	for _, f := range files {
		out.Files = append(out.Files, &pb.FileInspection{FileId: f.FileID, Exists: f.Exists, Path: f.Path,
			Replication: int32(f.Replication), Length: f.Length, Blocks: int32(f.Blocks), MinLiveReplicas: int32(f.MinLiveReplicas),
			FirstShortBlock: int32(f.FirstShortBlock), HasXattr: f.HasXattr, Xattr: f.Xattr, Holders: f.Holders})
	}
	return out, nil
}

func (s *server) SetReplications(ctx context.Context, in *pb.SetReplicationsRequest) (*pb.SetReplicationsResponse, error) {
	var changes []nnhost.ReplicationChange
	for _, c := range in.Changes {
		changes = append(changes, nnhost.ReplicationChange{Path: c.Path, Replication: int(c.Replication), Expect: int(c.Expect),
			SetXattr: c.SetXattr, XattrValue: c.XattrValue, RemoveXattr: c.RemoveXattr, FinalXattrValue: c.FinalXattrValue})
	}
	results, err := s.h.SetReplications(ctx, changes, caller(in.User, in.Service))
	if err != nil {
		return nil, err
	}
	out := &pb.SetReplicationsResponse{}
	for _, r := range results {
		out.Results = append(out.Results, &pb.ReplicationResult{Code: int32(r.Code), Message: r.Message, Before: int32(r.Before), Changed: r.Changed})
	}
	return out, nil
}

func (s *server) SetBalancedReads(ctx context.Context, in *pb.SetBalancedReadsRequest) (*pb.SetBalancedReadsResponse, error) {
	if !in.Service { // as the hook: a service call only
		return nil, status.Error(codes.InvalidArgument, "SetBalancedReads is a service call: set service")
	}
	topology, err := s.h.SetBalancedReads(ctx, in.Paths)
	if err != nil {
		return nil, err
	}
	return &pb.SetBalancedReadsResponse{TopologyInstalled: topology, Scope: "hinted", AuditHookInstalled: true}, nil
}
