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
	good  map[[32]byte]time.Time // credential hash -> accepted, exempt from the reservation until
	hosts map[string]*bucket     // remote host -> failure tokens

	refusals *prometheus.CounterVec // refused without verifying, by reason
}

// NewFailGuard guards next: at most rate failures per second per host (bursts of burst),
// failed credentials refused for ttl without another verification.
func NewFailGuard(next Authenticator, rate, burst float64, ttl time.Duration) *FailGuard {
	g := &FailGuard{next: next, rate: rate, burst: max(burst, 1), ttl: ttl, now: time.Now,
		bad: map[[32]byte]time.Time{}, good: map[[32]byte]time.Time{}, hosts: map[string]*bucket{},
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

// goodTTL is how long a credential that was accepted is exempt from its host's failure limit
// and from the reservation below (it is still verified on every call: a cancelled token is
// refused as soon as the verifier knows), so a flood from a host does not stop a job's valid
// token from the same host.
const goodTTL = 30 * time.Second

// Authenticate implements Authenticator. A credential not accepted in the last goodTTL takes
// one of its host's failure tokens before it is verified, given back if it is accepted or the
// verifier could not answer: so concurrent calls cannot spend more than the bucket holds (each
// would otherwise pass the check while the failures of the others are still being verified).
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
	until, good := g.good[key]
	good = good && now.Before(until)
	if b != nil && b.tokens < 1 && !good {
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
	var reserved *bucket
	if !good {
		reserved = g.bucketLocked(host, now)
		if reserved != nil {
			reserved.tokens--
		}
	}
	g.mu.Unlock()
	out, err := g.next.Authenticate(ctx, fullMethod)
	refused := err != nil && errors.Is(err, ErrUnauthenticated)
	g.mu.Lock()
	defer g.mu.Unlock()
	if reserved != nil && !refused {
		reserved.tokens = min(g.burst, reserved.tokens+1)
	}
	switch {
	case err == nil:
		if len(g.good) >= maxFailEntries {
			clear(g.good)
		}
		g.good[key] = now.Add(goodTTL)
	case refused:
		// Only a refusal is remembered: a daemon that could not be asked (UNAVAILABLE) is not
		// the caller's fault.
		delete(g.good, key)
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
		if reserved == nil {
			g.failLocked(host, now)
		}
	}
	return out, err
}

// failLocked takes one failure token from host's bucket.
func (g *FailGuard) failLocked(host string, now time.Time) {
	if b := g.bucketLocked(host, now); b != nil {
		b.tokens = max(0, b.tokens-1)
	}
}

// bucketLocked returns host's bucket, made full if it has none (nil when every host is failing
// right now and the map is full: the cache still spares the verifier).
func (g *FailGuard) bucketLocked(host string, now time.Time) *bucket {
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
			return nil
		}
		b = &bucket{tokens: g.burst, last: now}
		g.hosts[host] = b
	}
	return b
}
