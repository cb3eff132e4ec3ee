package authn

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// Failed authentications (issue 25): a caller that sends bad credentials costs the co-process
// a Kerberos verification or a host call (the daemon's secret manager) each time. FailGuard
// remembers a credential that failed (a negative cache keyed by its hash: the same bad
// credential is refused without being verified again) and bounds the failures per remote host
// (a token bucket that only failures drain: while it is empty, that host's calls are refused
// with RESOURCE_EXHAUSTED before anything is verified). A valid credential never enters the
// cache, and a host whose calls succeed is never limited. Under simple authentication nothing
// fails, so nothing is guarded.
//
// Keys (<prefix> is the co-process's, e.g. newtricks.namenode.ext):
const (
	// KeyAuthFailRate: <prefix>.api.auth.fail.rate, failed authentications per second one
	// remote host may cause (refill of its bucket); 0 disables the guard. Default
	// DefaultAuthFailRate.
	KeyAuthFailRate = ".api.auth.fail.rate"
	// KeyAuthFailBurst: <prefix>.api.auth.fail.burst, failures at once. Default
	// DefaultAuthFailBurst.
	KeyAuthFailBurst = ".api.auth.fail.burst"
	// KeyAuthFailCache: <prefix>.api.auth.fail.cache, how long a failed credential is
	// refused without being verified again (Go duration or milliseconds). Default
	// DefaultAuthFailCache.
	KeyAuthFailCache = ".api.auth.fail.cache"
)

// Defaults of the failure guard: well above a client retrying a stale ticket, far below what
// keeps a KDC-backed verifier or the NameNode's secret manager busy.
const (
	DefaultAuthFailRate  = 5
	DefaultAuthFailBurst = 20
	DefaultAuthFailCache = 30 * time.Second
)

// maxFailEntries bounds the guard's memory (cached credentials and hosts, each).
const maxFailEntries = 8192

// FailGuard wraps an Authenticator with the negative cache and the per-host failure limit.
type FailGuard struct {
	next  Authenticator
	rate  float64
	burst float64
	ttl   time.Duration
	now   func() time.Time

	mu    sync.Mutex
	bad   map[[32]byte]time.Time // credential hash -> refused until
	hosts map[string]*bucket     // remote host -> failure tokens

	refusals *prometheus.CounterVec // refused without verifying, by reason
}

// NewFailGuard guards next: at most rate failures per second per host (bursts of burst),
// failed credentials refused for ttl without another verification.
func NewFailGuard(next Authenticator, rate, burst float64, ttl time.Duration) *FailGuard {
	g := &FailGuard{next: next, rate: rate, burst: max(burst, 1), ttl: ttl, now: time.Now,
		bad: map[[32]byte]time.Time{}, hosts: map[string]*bucket{},
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "newtricks", Subsystem: "authn",
			Name: "refusals_total",
			Help: "Calls refused before their credentials were verified, by reason: cached (refused less than api.auth.fail.cache ago), throttled (their host is over api.auth.fail.rate)."},
			[]string{"reason"})}
	g.refusals.WithLabelValues("cached")
	g.refusals.WithLabelValues("throttled")
	return g
}

// Collector exports the refusals (newtricks_authn_refusals_total) and what the guarded
// authenticator exports (newtricks_authn_token_verifications_total).
func (g *FailGuard) Collector() prometheus.Collector {
	cs := collectors{g.refusals}
	if n, ok := g.next.(interface{ Collector() prometheus.Collector }); ok && n.Collector() != nil {
		cs = append(cs, n.Collector())
	}
	return cs
}

// collectors is several collectors as one.
type collectors []prometheus.Collector

func (cs collectors) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range cs {
		c.Describe(ch)
	}
}

func (cs collectors) Collect(ch chan<- prometheus.Metric) {
	for _, c := range cs {
		c.Collect(ch)
	}
}

// Authenticate implements Authenticator.
func (g *FailGuard) Authenticate(ctx context.Context, fullMethod string) (context.Context, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	key := sha256.Sum256([]byte(strings.Join(md.Get(MetadataKey), "\x00")))
	host := hostOnly(remoteAddr(ctx))
	now := g.now()
	g.mu.Lock()
	b := g.hosts[host]
	if b != nil {
		b.tokens = min(g.burst, b.tokens+now.Sub(b.last).Seconds()*g.rate)
		b.last = now
	}
	if b != nil && b.tokens < 1 {
		g.mu.Unlock()
		g.refusals.WithLabelValues("throttled").Inc()
		return nil, status.Errorf(codes.ResourceExhausted, "too many failed authentications from %s (more than %g/s, burst %g): retry later", host, g.rate, g.burst)
	}
	if until, ok := g.bad[key]; ok && now.Before(until) {
		g.failLocked(host, now)
		g.mu.Unlock()
		g.refusals.WithLabelValues("cached").Inc()
		return nil, fmt.Errorf("%w: these credentials were refused less than %v ago", ErrUnauthenticated, g.ttl)
	}
	g.mu.Unlock()
	out, err := g.next.Authenticate(ctx, fullMethod)
	if err != nil && errors.Is(err, ErrUnauthenticated) {
		// Only a refusal is remembered: a daemon that could not be asked (UNAVAILABLE) is not
		// the caller's fault.
		g.mu.Lock()
		if len(g.bad) >= maxFailEntries {
			for k, until := range g.bad {
				if !now.Before(until) || len(g.bad) >= maxFailEntries {
					delete(g.bad, k)
				}
				if len(g.bad) < maxFailEntries/2 {
					break
				}
			}
		}
		g.bad[key] = now.Add(g.ttl)
		g.failLocked(host, now)
		g.mu.Unlock()
	}
	return out, err
}

// failLocked takes one failure token from host's bucket.
func (g *FailGuard) failLocked(host string, now time.Time) {
	b := g.hosts[host]
	if b == nil {
		if len(g.hosts) >= maxFailEntries {
			for h, old := range g.hosts {
				if now.Sub(old.last).Seconds()*g.rate >= g.burst { // full again: forgettable
					delete(g.hosts, h)
				}
			}
		}
		if len(g.hosts) >= maxFailEntries {
			return // every host is failing right now: the cache still spares the verifier
		}
		b = &bucket{tokens: g.burst, last: now}
		g.hosts[host] = b
	}
	b.tokens = max(0, b.tokens-1)
}
