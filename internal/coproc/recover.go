package coproc

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Recovery turns a panic in a public API call (its authentication included) into INTERNAL for
// that call: gRPC does not recover handlers, and one request must never take the co-process,
// and with it the service for every user of the daemon, down. The stack goes to the
// co-process's log, never to the caller.
type Recovery struct {
	Log hclog.Logger
	// Panics counts the calls recovered.
	Panics atomic.Int64
}

func (r *Recovery) recovered(method string, p any) error {
	r.Panics.Add(1)
	if r.Log != nil {
		r.Log.Error("recovered from a panic in a public API call: the call fails, the co-process goes on",
			"method", method, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
	}
	return status.Errorf(codes.Internal, "internal error in %s (the co-process logged it)", method)
}

// ServerOptions are the interceptors; they go first, so that they cover every interceptor after
// them.
func (r *Recovery) ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (resp any, err error) {
			defer func() {
				if p := recover(); p != nil {
					resp, err = nil, r.recovered(info.FullMethod, p)
				}
			}()
			return h(ctx, req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) (err error) {
			defer func() {
				if p := recover(); p != nil {
					err = r.recovered(info.FullMethod, p)
				}
			}()
			return h(srv, ss)
		}),
	}
}
