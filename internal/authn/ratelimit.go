package authn

import (
	"context"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Defaults of the per-user rate limit (Config.RatePerUser, Config.RateBurst): above what a
// training job's DataLoaders ask of one co-process (thousands of samples per second), below
// what lets one user starve the others.
const (
	DefaultRatePerUser = 5000
	DefaultRateBurst   = 10000
)

// maxBuckets bounds the limiter's memory; when full, idle buckets are dropped.
const maxBuckets = 8192

// RateLimiter is a token bucket per proven user (Kerberos or delegation token). A call over
// the limit is refused with RESOURCE_EXHAUSTED before it reaches a handler, so one user cannot
// take the co-process and the daemon's host calls from everybody else. Under simple
// authentication there is no user to count against (a claimed name changes per call for
// free, and every local client shares one address), so calls are not limited there; the
// daemon's bounded host-call admission still holds.
type RateLimiter struct {
	rate  float64 // tokens per second
	burst float64
	now   func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

// NewRateLimiter allows rate calls per second per caller with bursts of burst (>= 1).
func NewRateLimiter(rate, burst float64) *RateLimiter {
	if burst < 1 {
		burst = 1
	}
	return &RateLimiter{rate: rate, burst: burst, now: time.Now, buckets: map[string]*bucket{}}
}

// Allow takes one token from key's bucket.
func (r *RateLimiter) Allow(key string) bool {
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	b, ok := r.buckets[key]
	if !ok {
		if len(r.buckets) >= maxBuckets {
			for k, old := range r.buckets {
				if now.Sub(old.last).Seconds()*r.rate >= r.burst { // full again: forgettable
					delete(r.buckets, k)
				}
			}
		}
		b = &bucket{tokens: r.burst, last: now}
		r.buckets[key] = b
	}
	b.tokens = min(r.burst, b.tokens+now.Sub(b.last).Seconds()*r.rate)
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// rateKey is whom a call is counted against: the proven user, "" when there is none.
func rateKey(ctx context.Context) string {
	c, ok := FromContext(ctx)
	if !ok || c.Identity.Method == MethodSimple || c.Identity.User == "" {
		return ""
	}
	return "user:" + c.Identity.User
}

func (r *RateLimiter) check(ctx context.Context) error {
	k := rateKey(ctx)
	if k == "" || r.Allow(k) {
		return nil
	}
	return status.Errorf(codes.ResourceExhausted, "rate limit: more than %g calls/s (burst %g) from %s", r.rate, r.burst, k)
}

// ServerOptions returns interceptors that must run after authentication (ServerOptions of
// this package, chained first).
func (r *RateLimiter) ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			if err := r.check(ctx); err != nil {
				return nil, err
			}
			return h(ctx, req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			if err := r.check(ss.Context()); err != nil {
				return err
			}
			return h(srv, ss)
		}),
	}
}
