package authn

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// hostCacheTTL is how long the daemon's answers are reused. Hadoop caches group lookups for
// 300 s (hadoop.security.groups.cache.secs) and proxy-user rules until refreshed; 30 s keeps
// the co-process at most that stale while sparing the daemon a call per request.
const hostCacheTTL = 30 * time.Second

// hostCacheMax bounds each cache; when full it is emptied (simple, and an attacker cycling
// names only costs host calls, which are bounded there).
const hostCacheMax = 4096

// Host answers identity questions with Hadoop's own rules through the daemon's SecurityHost
// service (host.proto): auth_to_local, hadoop.proxyuser.*, the superuser and supergroup, and
// the NameNode's delegation-token secret manager. Positive and negative answers are cached
// for 30 s; delegation tokens are never cached here (the NameNode path must see a cancel at
// once).
type Host struct {
	rpc pb.SecurityHostClient
	now func() time.Time
	// verifications counts the delegation tokens sent to the daemon, by result.
	verifications *prometheus.CounterVec

	mu      sync.Mutex
	names   map[string]cached[string] // principal -> short name
	proxies map[[3]string]cached[bool]
	admins  map[string]cached[bool]
}

type cached[T any] struct {
	v   T
	err error
	exp time.Time
}

// NewHost returns a Host calling the SecurityHost service on conn (the co-process's
// connection to its daemon).
func NewHost(conn grpc.ClientConnInterface) *Host {
	h := &Host{rpc: pb.NewSecurityHostClient(conn), now: time.Now,
		names: map[string]cached[string]{}, proxies: map[[3]string]cached[bool]{}, admins: map[string]cached[bool]{},
		verifications: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "newtricks", Subsystem: "authn",
			Name: "token_verifications_total",
			Help: "Delegation tokens the co-process asked its daemon to verify, by result: valid, rejected, error (the daemon could not answer). On a DataNode each one it cannot answer from its own cache is a call to the NameNode."},
			[]string{"result"})}
	for _, r := range []string{"valid", "rejected", "error"} {
		h.verifications.WithLabelValues(r)
	}
	return h
}

// Collector exports the token verifications (newtricks_authn_token_verifications_total).
func (h *Host) Collector() prometheus.Collector { return h.verifications }

func lookup[K comparable, V any](h *Host, m map[K]cached[V], k K, call func() (V, error)) (V, error) {
	h.mu.Lock()
	c, ok := m[k]
	h.mu.Unlock()
	if ok && h.now().Before(c.exp) {
		return c.v, c.err
	}
	v, err := call()
	if err != nil && !denied(err) {
		// The daemon could not answer (not ready, busy): not an answer to remember.
		return v, err
	}
	h.mu.Lock()
	if len(m) >= hostCacheMax {
		clear(m)
	}
	m[k] = cached[V]{v: v, err: err, exp: h.now().Add(hostCacheTTL)}
	h.mu.Unlock()
	return v, err
}

// denied reports whether err is the daemon's definite "no" rather than a failure to answer.
func denied(err error) bool {
	switch status.Code(err) {
	case codes.PermissionDenied, codes.InvalidArgument:
		return true
	}
	return false
}

// MapPrincipal returns the short user name of a Kerberos principal under the daemon's
// hadoop.security.auth_to_local rules.
func (h *Host) MapPrincipal(ctx context.Context, principal string) (string, error) {
	user, err := lookup(h, h.names, principal, func() (string, error) {
		r, err := h.rpc.MapPrincipal(ctx, &pb.MapPrincipalRequest{Principal: principal})
		return r.GetUser(), err
	})
	if err != nil {
		if denied(err) {
			return "", fmt.Errorf("%w: %s: %v", ErrUnauthenticated, principal, status.Convert(err).Message())
		}
		return "", fmt.Errorf("map principal %s: %w", principal, err)
	}
	return user, nil
}

// AuthorizeProxy implements Impersonator with Hadoop's ProxyUsers.authorize.
func (h *Host) AuthorizeProxy(ctx context.Context, realUser, user, remoteAddr string) error {
	_, err := lookup(h, h.proxies, [3]string{realUser, user, hostOnly(remoteAddr)}, func() (bool, error) {
		_, err := h.rpc.AuthorizeProxy(ctx, &pb.AuthorizeProxyRequest{RealUser: realUser, User: user, RemoteAddr: remoteAddr})
		return err == nil, err
	})
	if err != nil {
		return fmt.Errorf("%s", status.Convert(err).Message())
	}
	return nil
}

// IsAdmin implements Impersonator: the daemon's superuser or a member of
// dfs.permissions.superusergroup.
func (h *Host) IsAdmin(ctx context.Context, user string) (bool, error) {
	return lookup(h, h.admins, user, func() (bool, error) {
		r, err := h.rpc.IsAdmin(ctx, &pb.IsAdminRequest{User: user})
		return r.GetAdmin(), err
	})
}

// TokenOwner is whom a verified delegation token was issued to.
type TokenOwner struct {
	User     string // short name of the token's (effective) owner
	RealUser string // set when the token was issued to a proxy user
	Owner    string // the owner as recorded (principal), for logs
}

// VerifyToken asks the daemon to verify an HDFS delegation token (password, expiry, not
// cancelled). A rejected token wraps ErrUnauthenticated.
func (h *Host) VerifyToken(ctx context.Context, t Token) (TokenOwner, error) {
	switch t.Kind {
	case HDFSDelegationKind, webHDFSDelegationKind, swebHDFSDelegationKind:
		// WebHDFS hands out the NameNode's own delegation token under its own kind: the same
		// identifier and password, checked by the same secret manager.
	default:
		return TokenOwner{}, fmt.Errorf("%w: token kind %q is not an HDFS delegation token", ErrUnauthenticated, truncate(t.Kind, 40))
	}
	r, err := h.rpc.VerifyDelegationToken(ctx, &pb.VerifyDelegationTokenRequest{Token: &pb.Token{
		Identifier: t.Identifier, Password: t.Password, Kind: HDFSDelegationKind, Service: t.Service}})
	switch {
	case err == nil && r.GetUser() != "":
		h.verifications.WithLabelValues("valid").Inc()
	case err == nil || denied(err):
		h.verifications.WithLabelValues("rejected").Inc()
	default:
		h.verifications.WithLabelValues("error").Inc()
	}
	if err != nil {
		if denied(err) {
			return TokenOwner{}, fmt.Errorf("%w: %s", ErrUnauthenticated, status.Convert(err).Message())
		}
		return TokenOwner{}, fmt.Errorf("verify delegation token: %w", err)
	}
	if r.GetUser() == "" {
		return TokenOwner{}, fmt.Errorf("%w: delegation token names no user", ErrUnauthenticated)
	}
	return TokenOwner{User: r.GetUser(), RealUser: r.GetRealUser(), Owner: r.GetOwner()}, nil
}

// hostOnly drops the port: proxy-user rules are per host, so one cache entry per host.
func hostOnly(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return addr
}
