package hotspot

import (
	"context"

	"google.golang.org/grpc"

	"github.com/newtricks/newtricks/internal/authn"

	nnv1 "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// RegisterGRPC registers the Hints service on s (namenode-ext's public API server).
func (m *Manager) RegisterGRPC(s *grpc.Server) {
	nnv1.RegisterHintsServer(s, m.GRPCServer())
}

// GRPCServer is the Hints service of m, for a caller that registers it itself (namenode-ext
// switches it with its NameNode's active terms).
func (m *Manager) GRPCServer() nnv1.HintsServer { return &server{m: m} }

// server is the thin gRPC shim over Manager: convert, call, map errors.
type server struct {
	nnv1.UnimplementedHintsServer
	m *Manager
}

func (s *server) Create(ctx context.Context, req *nnv1.CreateHintRequest) (*nnv1.HintPlan, error) {
	r := requestFromProto(req)
	user, err := authn.ActAs(ctx, r.User)
	if err != nil {
		return nil, ToStatus(err)
	}
	r.User = user
	plan, err := s.m.Create(ctx, r)
	if err != nil {
		return nil, ToStatus(err)
	}
	return planToProto(plan), nil
}

func (s *server) Status(ctx context.Context, req *nnv1.HintStatusRequest) (*nnv1.HintStatus, error) {
	user, err := authn.ActAs(ctx, req.User)
	if err != nil {
		return nil, ToStatus(err)
	}
	st, err := s.m.Status(ctx, req.HintId, user)
	if err != nil {
		return nil, ToStatus(err)
	}
	return StatusToProto(st), nil
}

func (s *server) Extend(ctx context.Context, req *nnv1.ExtendHintRequest) (*nnv1.HintStatus, error) {
	user, err := authn.ActAs(ctx, req.User)
	if err != nil {
		return nil, ToStatus(err)
	}
	st, err := s.m.Extend(ctx, req.HintId, user, msDuration(req.ExtendByMs))
	if err != nil {
		return nil, ToStatus(err)
	}
	return StatusToProto(st), nil
}

func (s *server) Done(ctx context.Context, req *nnv1.DoneHintRequest) (*nnv1.HintStatus, error) {
	user, err := authn.ActAs(ctx, req.User)
	if err != nil {
		return nil, ToStatus(err)
	}
	st, err := s.m.Done(ctx, req.HintId, user, req.Cancel)
	if err != nil {
		return nil, ToStatus(err)
	}
	return StatusToProto(st), nil
}

func (s *server) List(ctx context.Context, req *nnv1.ListHintsRequest) (*nnv1.ListHintsResponse, error) {
	user, err := authn.ActAs(ctx, req.User)
	if err != nil {
		return nil, ToStatus(err)
	}
	hints, problems := s.m.List(ctx, user)
	out := &nnv1.ListHintsResponse{Problems: problems}
	for _, st := range hints {
		out.Hints = append(out.Hints, StatusToProto(st))
	}
	return out, nil
}
