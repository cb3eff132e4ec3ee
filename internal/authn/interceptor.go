package authn

import (
	"context"
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// Authenticator establishes the caller of one incoming call.
type Authenticator interface {
	// Authenticate returns the caller's context (built with NewContext) or an error wrapping
	// ErrUnauthenticated.
	Authenticate(ctx context.Context, fullMethod string) (context.Context, error)
}

// Simple trusts the user name each request carries, as HDFS does under simple
// authentication. Imp, if set, answers RequireAdmin.
type Simple struct{ Imp Impersonator }

// Collector exports the delegation-token counters of Imp when it is a Host (they stay at zero:
// simple authentication verifies no token).
func (s Simple) Collector() prometheus.Collector {
	if h, ok := s.Imp.(*Host); ok {
		return h.Collector()
	}
	return nil
}

// Authenticate implements Authenticator.
func (s Simple) Authenticate(ctx context.Context, _ string) (context.Context, error) {
	return NewContext(ctx, Identity{Method: MethodSimple}, remoteAddr(ctx), s.Imp), nil
}

func remoteAddr(ctx context.Context) string {
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		return p.Addr.String()
	}
	return ""
}

// RemoteAddr returns the address of the call's peer, for authenticators.
func RemoteAddr(ctx context.Context) string { return remoteAddr(ctx) }

// Code maps this package's errors to gRPC codes (codes.OK if err is not one of them).
func Code(err error) codes.Code {
	switch {
	case errors.Is(err, ErrUnauthenticated):
		return codes.Unauthenticated
	case errors.Is(err, ErrForbidden):
		return codes.PermissionDenied
	case errors.Is(err, ErrNoUser):
		return codes.InvalidArgument
	}
	return codes.OK
}

// ServerOptions returns the interceptors that run a on every unary and streaming call.
func ServerOptions(a Authenticator) []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			ctx, err := a.Authenticate(ctx, info.FullMethod)
			if err != nil {
				return nil, authStatus(err)
			}
			return h(ctx, req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			ctx, err := a.Authenticate(ss.Context(), info.FullMethod)
			if err != nil {
				return authStatus(err)
			}
			return h(srv, &wrappedStream{ServerStream: ss, ctx: ctx})
		}),
	}
}

// authStatus is the status of a failed authentication: UNAUTHENTICATED, unless the daemon
// could not be asked (then its own code, e.g. UNAVAILABLE or RESOURCE_EXHAUSTED, so clients
// retry instead of giving up on valid credentials).
func authStatus(err error) error {
	if !errors.Is(err, ErrUnauthenticated) {
		var se interface{ GRPCStatus() *status.Status }
		if errors.As(err, &se) && se.GRPCStatus().Code() != codes.OK {
			return status.Error(se.GRPCStatus().Code(), err.Error())
		}
	}
	return status.Error(codes.Unauthenticated, err.Error())
}

type wrappedStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (w *wrappedStream) Context() context.Context { return w.ctx }
