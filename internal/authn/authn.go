package authn

import (
	"context"
	"errors"
	"fmt"
)

// Sentinel errors. The RPC edge maps ErrUnauthenticated to codes.Unauthenticated and
// ErrForbidden to codes.PermissionDenied (see Code).
var (
	// ErrUnauthenticated: the call carries no valid credentials, or no authenticator ran.
	ErrUnauthenticated = errors.New("unauthenticated")
	// ErrForbidden: the caller is known but may not act as the requested user, or needs
	// administrator rights it does not have.
	ErrForbidden = errors.New("forbidden")
	// ErrNoUser: simple authentication and the request names no user.
	ErrNoUser = errors.New("user is required")
)

// Method is how an Identity was established.
type Method string

const (
	// MethodSimple: the caller's name is claimed, not proven (hadoop.security.authentication=simple).
	MethodSimple Method = "simple"
	// MethodKerberos: a verified Kerberos (GSS-API/SPNEGO) token.
	MethodKerberos Method = "kerberos"
	// MethodToken: a verified HDFS delegation token.
	MethodToken Method = "token"
)

// Identity is who the caller proved to be.
type Identity struct {
	// User is the short HDFS user name (the principal mapped by auth_to_local). Empty under
	// MethodSimple: simple authentication proves nothing, the request names the user.
	User string
	// Principal is the full Kerberos principal or the token's owner, for logs.
	Principal string
	Method    Method
}

// Impersonator decides whether realUser may act as user (Hadoop's ProxyUsers.authorize with
// the caller's address) and whether a user is an HDFS administrator (the superuser or a member
// of dfs.permissions.superusergroup). Installed by authenticators that prove identities.
type Impersonator interface {
	AuthorizeProxy(ctx context.Context, realUser, user, remoteAddr string) error
	IsAdmin(ctx context.Context, user string) (bool, error)
}

// Caller is what the interceptor stores in the context of every call.
type Caller struct {
	Identity   Identity
	RemoteAddr string
	imp        Impersonator
}

type callerKey struct{}

// NewContext returns ctx carrying the caller. Authenticators and tests use it.
func NewContext(ctx context.Context, id Identity, remoteAddr string, imp Impersonator) context.Context {
	return context.WithValue(ctx, callerKey{}, &Caller{Identity: id, RemoteAddr: remoteAddr, imp: imp})
}

// FromContext returns the caller the interceptor stored, if any.
func FromContext(ctx context.Context) (*Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(*Caller)
	return c, ok
}

// ActAs returns the HDFS user the call acts as. requested is the user the request names
// (may be empty). Under simple authentication requested is trusted and required. With a proven
// identity, an empty or equal requested name acts as the identity; another name is allowed only
// by the Impersonator's proxy-user rules. A context without a Caller (a server built without
// the interceptor) is ErrUnauthenticated, never an implicit superuser.
func ActAs(ctx context.Context, requested string) (string, error) {
	c, ok := FromContext(ctx)
	if !ok {
		return "", fmt.Errorf("%w: no authenticated caller on this call", ErrUnauthenticated)
	}
	if c.Identity.Method == MethodSimple {
		if requested == "" {
			return "", ErrNoUser
		}
		return requested, nil
	}
	if c.Identity.User == "" {
		return "", fmt.Errorf("%w: %s identity without a user", ErrUnauthenticated, c.Identity.Method)
	}
	if requested == "" || requested == c.Identity.User {
		return c.Identity.User, nil
	}
	if c.imp == nil {
		return "", fmt.Errorf("%w: %s may not act as %s", ErrForbidden, c.Identity.User, requested)
	}
	if err := c.imp.AuthorizeProxy(ctx, c.Identity.User, requested, c.RemoteAddr); err != nil {
		return "", fmt.Errorf("%w: %s may not act as %s: %v", ErrForbidden, c.Identity.User, requested, err)
	}
	return requested, nil
}

// RequireAdmin fails unless the caller is an HDFS administrator. Under simple authentication
// the claimed user is checked the same way (as HDFS would check a claimed superuser name); a
// caller without an Impersonator to ask is refused.
func RequireAdmin(ctx context.Context, requested string) (string, error) {
	user, err := ActAs(ctx, requested)
	if err != nil {
		return "", err
	}
	c, _ := FromContext(ctx)
	if c.imp == nil {
		return "", fmt.Errorf("%w: cannot verify that %s is an administrator", ErrForbidden, user)
	}
	ok, err := c.imp.IsAdmin(ctx, user)
	if err != nil {
		return "", fmt.Errorf("%w: admin check for %s: %v", ErrForbidden, user, err)
	}
	if !ok {
		return "", fmt.Errorf("%w: %s is not an HDFS administrator", ErrForbidden, user)
	}
	return user, nil
}

// RequireAdminView guards views that expose other users' activity (paths, users and client
// addresses: namenode-ext's RecentEvents). With a proven identity (Kerberos or a delegation
// token) the caller must be an HDFS administrator (RequireAdmin). Under simple authentication
// nothing is proven and any caller could claim the superuser's name, so the view stays open
// there, like the rest of a simple-auth API, which says so loudly in its logs and status.
func RequireAdminView(ctx context.Context) error {
	c, ok := FromContext(ctx)
	if !ok {
		return fmt.Errorf("%w: no authenticated caller on this call", ErrUnauthenticated)
	}
	if c.Identity.Method == MethodSimple {
		return nil
	}
	_, err := RequireAdmin(ctx, "")
	return err
}
