package offload

import (
	"context"
	"fmt"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"

	"github.com/newtricks/newtricks/datanode-ext/governor"
	"github.com/newtricks/newtricks/internal/authn"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// Server is the thin gRPC shim of the Offload service over a Manager: resolve the caller,
// convert (convert.go), call, map the errors (errors.go).
type Server struct {
	pb.UnimplementedOffloadServer
	// Sessions does the work.
	Sessions *Manager
	// Gov is the node's governor (NodeStatus, SetGovernor).
	Gov *governor.Governor
	// Self returns the DataNode's UUID and transfer address ("" until known).
	Self func() (uuid, xfer string)
	// Version is reported to readers when they open a session.
	Version string
	// Log may be nil.
	Log hclog.Logger
}

// Register adds the Offload service to s.
func (sv *Server) Register(s *grpc.Server) { pb.RegisterOffloadServer(s, sv) }

// OpenSession implements pb.OffloadServer.
func (sv *Server) OpenSession(ctx context.Context, req *pb.OpenSessionRequest) (*pb.OpenSessionResponse, error) {
	user, err := authn.ActAs(ctx, req.GetUser())
	if err != nil {
		return nil, toStatus(err)
	}
	res, err := sv.Sessions.Open(ctx, user, openRequestFromProto(req))
	if err != nil {
		return nil, toStatus(fmt.Errorf("open session: %w", err))
	}
	resp := openResultToProto(res)
	_, resp.XferAddr = sv.Self()
	resp.Version = sv.Version
	return resp, nil
}

// GetStep implements pb.OffloadServer.
func (sv *Server) GetStep(req *pb.GetStepRequest, stream grpc.ServerStreamingServer[pb.OffloadSample]) error {
	ctx := stream.Context()
	user, err := authn.ActAs(ctx, req.GetUser())
	if err != nil {
		return toStatus(err)
	}
	err = sv.Sessions.GetStep(ctx, user, stepRequestFromProto(req), func(s Sample) error {
		return stream.Send(sampleToProto(s))
	})
	return toStatus(err)
}

// GetStepBatch implements pb.OffloadServer.
func (sv *Server) GetStepBatch(req *pb.GetStepRequest, stream grpc.ServerStreamingServer[pb.OffloadSampleBatch]) error {
	ctx := stream.Context()
	user, err := authn.ActAs(ctx, req.GetUser())
	if err != nil {
		return toStatus(err)
	}
	err = sv.Sessions.GetStepBatch(ctx, user, stepRequestFromProto(req), func(b []Sample) error {
		return stream.Send(&pb.OffloadSampleBatch{Samples: samplesToProto(b)})
	})
	return toStatus(err)
}

// CloseSession implements pb.OffloadServer.
func (sv *Server) CloseSession(ctx context.Context, req *pb.CloseSessionRequest) (*pb.CloseSessionResponse, error) {
	user, err := authn.ActAs(ctx, req.GetUser())
	if err != nil {
		return nil, toStatus(err)
	}
	if err := sv.Sessions.Close(user, req.GetSessionId()); err != nil {
		return nil, toStatus(err)
	}
	return &pb.CloseSessionResponse{}, nil
}

// ReadRange implements pb.OffloadServer.
func (sv *Server) ReadRange(ctx context.Context, req *pb.ReadRangeRequest) (*pb.ReadRangeResponse, error) {
	user, err := authn.ActAs(ctx, req.GetUser())
	if err != nil {
		return nil, toStatus(err)
	}
	data, err := sv.Sessions.ReadRange(ctx, user, req.GetBlock(), req.GetOffset(), req.GetLength())
	if err != nil {
		return nil, toStatus(fmt.Errorf("read range: %w", err))
	}
	return &pb.ReadRangeResponse{Data: data}, nil
}

// NodeStatus implements pb.OffloadServer.
func (sv *Server) NodeStatus(ctx context.Context, req *pb.OffloadNodeStatusRequest) (*pb.OffloadNodeStatus, error) {
	if _, err := authn.ActAs(ctx, req.GetUser()); err != nil {
		return nil, toStatus(err)
	}
	uuid, xfer := sv.Self()
	if uuid == "" {
		return nil, toStatus(fmt.Errorf("%w: the DataNode has not told its identity yet", ErrUnavailable))
	}
	return nodeStatusToProto(uuid, xfer, sv.Sessions.Domain(), sv.Gov.Status(), sv.Sessions.Counters(), sv.Sessions.Config()), nil
}

// SetGovernor implements pb.OffloadServer: administrators only.
func (sv *Server) SetGovernor(ctx context.Context, req *pb.SetGovernorRequest) (*pb.OffloadNodeStatus, error) {
	user, err := authn.RequireAdmin(ctx, req.GetUser())
	if err != nil {
		return nil, toStatus(err)
	}
	if err := sv.Gov.SetThresholds(req.GetThresholdHigh(), req.GetThresholdLow()); err != nil {
		return nil, toStatus(fmt.Errorf("%w: %v", ErrInvalid, err))
	}
	if sv.Log != nil {
		sv.Log.Info("governor thresholds changed", "by", user, "high", req.GetThresholdHigh(), "low", req.GetThresholdLow())
	}
	return sv.NodeStatus(ctx, &pb.OffloadNodeStatusRequest{User: user})
}
