package offload

import (
	"context"
	"fmt"
	"sync"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/newtricks/newtricks/datanode-ext/governor"
	"github.com/newtricks/newtricks/internal/authn"
	"github.com/newtricks/newtricks/internal/coproc"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// Server implements pb.OffloadServer.
type Server struct {
	pb.UnimplementedOffloadServer
	Sessions *Manager
	Gov      *governor.Governor
	// Self returns the DataNode's UUID and transfer address ("" until known).
	Self    func() (uuid, xfer string)
	Version string
	Log     hclog.Logger // may be nil
}

// Register adds the Offload service to s.
func (sv *Server) Register(s *grpc.Server) { pb.RegisterOffloadServer(s, sv) }

// OpenSession implements pb.OffloadServer.
func (sv *Server) OpenSession(ctx context.Context, req *pb.OpenSessionRequest) (*pb.OpenSessionResponse, error) {
	user, err := authn.ActAs(ctx, req.GetUser())
	if err != nil {
		return nil, coproc.ToStatus(err)
	}
	resp, err := sv.Sessions.Open(ctx, user, req)
	if err != nil {
		return nil, coproc.ToStatus(fmt.Errorf("open session: %w", err))
	}
	_, resp.XferAddr = sv.Self()
	resp.Version = sv.Version
	return resp, nil
}

// GetStep implements pb.OffloadServer.
func (sv *Server) GetStep(req *pb.GetStepRequest, stream grpc.ServerStreamingServer[pb.OffloadSample]) error {
	ctx := stream.Context()
	user, err := authn.ActAs(ctx, req.GetUser())
	if err != nil {
		return coproc.ToStatus(err)
	}
	err = sv.Sessions.GetStep(ctx, user, req, stream.Send)
	return coproc.ToStatus(err)
}

// GetStepBatch implements pb.OffloadServer.
func (sv *Server) GetStepBatch(req *pb.GetStepRequest, stream grpc.ServerStreamingServer[pb.OffloadSampleBatch]) error {
	ctx := stream.Context()
	user, err := authn.ActAs(ctx, req.GetUser())
	if err != nil {
		return coproc.ToStatus(err)
	}
	err = sv.Sessions.GetStepBatch(ctx, user, req, func(b []*pb.OffloadSample) error {
		return stream.Send(&pb.OffloadSampleBatch{Samples: b})
	})
	return coproc.ToStatus(err)
}

// CloseSession implements pb.OffloadServer.
func (sv *Server) CloseSession(ctx context.Context, req *pb.CloseSessionRequest) (*pb.CloseSessionResponse, error) {
	user, err := authn.ActAs(ctx, req.GetUser())
	if err != nil {
		return nil, coproc.ToStatus(err)
	}
	if err := sv.Sessions.Close(user, req.GetSessionId()); err != nil {
		return nil, coproc.ToStatus(err)
	}
	return &pb.CloseSessionResponse{}, nil
}

// ReadRange implements pb.OffloadServer.
func (sv *Server) ReadRange(ctx context.Context, req *pb.ReadRangeRequest) (*pb.ReadRangeResponse, error) {
	user, err := authn.ActAs(ctx, req.GetUser())
	if err != nil {
		return nil, coproc.ToStatus(err)
	}
	data, err := sv.Sessions.ReadRange(ctx, user, req.GetBlock(), req.GetOffset(), req.GetLength())
	if err != nil {
		return nil, coproc.ToStatus(fmt.Errorf("read range: %w", err))
	}
	return &pb.ReadRangeResponse{Data: data}, nil
}

// NodeStatus implements pb.OffloadServer.
func (sv *Server) NodeStatus(ctx context.Context, req *pb.OffloadNodeStatusRequest) (*pb.OffloadNodeStatus, error) {
	if _, err := authn.ActAs(ctx, req.GetUser()); err != nil {
		return nil, coproc.ToStatus(err)
	}
	uuid, xfer := sv.Self()
	if uuid == "" {
		return nil, coproc.ToStatus(fmt.Errorf("%w: the DataNode has not told its identity yet", coproc.ErrUnavailable))
	}
	g := sv.Gov.Status()
	c := sv.Sessions.Counters()
	cfg := sv.Sessions.Config()
	return &pb.OffloadNodeStatus{
		DatanodeUuid: uuid, XferAddr: xfer, DeterminismDomain: sv.Sessions.Domain(),
		Shedding: g.Shedding, CpuOther: g.Other, CpuOwn: g.Own, ThresholdHigh: g.High, ThresholdLow: g.Low,
		Workers: uint32(cfg.Workers), CpuBudget: float64(cfg.Workers), Sessions: uint32(c.Sessions),
		QueuedBytes: c.QueuedBytes, QueueMaxBytes: cfg.QueueMaxBytes,
		SamplesTransformed: c.Transformed, SamplesRaw: c.Raw, SampleErrors: c.Errors, ShedTransitions: g.Transitions,
	}, nil
}

// SetGovernor implements pb.OffloadServer: administrators only.
func (sv *Server) SetGovernor(ctx context.Context, req *pb.SetGovernorRequest) (*pb.OffloadNodeStatus, error) {
	user, err := authn.RequireAdmin(ctx, req.GetUser())
	if err != nil {
		return nil, coproc.ToStatus(err)
	}
	if err := sv.Gov.SetThresholds(req.GetThresholdHigh(), req.GetThresholdLow()); err != nil {
		return nil, coproc.ToStatus(fmt.Errorf("%w: %v", coproc.ErrInvalid, err))
	}
	if sv.Log != nil {
		sv.Log.Info("governor thresholds changed", "by", user, "high", req.GetThresholdHigh(), "low", req.GetThresholdLow())
	}
	return sv.NodeStatus(ctx, &pb.OffloadNodeStatusRequest{User: user})
}

// GRPCPeers reads ranges from other datanode-ext nodes through their Offload.ReadRange,
// keeping one connection per address.
type GRPCPeers struct {
	mu    sync.Mutex
	conns map[string]*grpc.ClientConn
}

// NewGRPCPeers returns an empty connection cache.
func NewGRPCPeers() *GRPCPeers { return &GRPCPeers{conns: map[string]*grpc.ClientConn{}} }

// ReadRange implements Peers.
func (p *GRPCPeers) ReadRange(ctx context.Context, addr, user string, b *pb.LocatedBlock, off, n int64) ([]byte, error) {
	p.mu.Lock()
	cc, ok := p.conns[addr]
	if !ok {
		var err error
		cc, err = grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxRangeBytes+1<<20)))
		if err != nil {
			p.mu.Unlock()
			return nil, fmt.Errorf("%w: dial peer %s: %v", coproc.ErrUnavailable, addr, err)
		}
		p.conns[addr] = cc
	}
	p.mu.Unlock()
	resp, err := pb.NewOffloadClient(cc).ReadRange(ctx, &pb.ReadRangeRequest{User: user, Block: b, Offset: off, Length: n})
	if err != nil {
		return nil, fmt.Errorf("peer %s: block %d: %w", addr, b.GetBlockId(), coproc.FromStatus(err))
	}
	if int64(len(resp.GetData())) != n {
		return nil, fmt.Errorf("%w: peer %s returned %d bytes of %d", coproc.ErrUnavailable, addr, len(resp.GetData()), n)
	}
	return resp.GetData(), nil
}
