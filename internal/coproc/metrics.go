package coproc

import (
	"context"
	"path"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
)

// hostCallMetrics times every call a co-process makes into its Hadoop daemon.
type hostCallMetrics struct {
	*prometheus.HistogramVec
}

func newHostCallMetrics() hostCallMetrics {
	return hostCallMetrics{prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "newtricks", Subsystem: "host", Name: "call_seconds",
		Help:    "Latency of calls into the Hadoop daemon's host service, by method and gRPC code.",
		Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10),
	}, []string{"method", "code"})}
}

func (m hostCallMetrics) intercept(ctx context.Context, method string, req, reply any,
	cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	start := time.Now()
	err := invoker(ctx, method, req, reply, cc, opts...)
	m.WithLabelValues(path.Base(method), status.Code(err).String()).Observe(time.Since(start).Seconds())
	return err
}
