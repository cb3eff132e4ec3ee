package authn

import (
	"context"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"google.golang.org/grpc/metadata"
)

// Secure authenticates every call with a Kerberos SPNEGO token or an HDFS delegation token
// (see MetadataKey); a call with neither is ErrUnauthenticated. The proven user is the only
// user the call may act as, apart from what Hadoop's proxy-user rules allow (Host).
type Secure struct {
	// Kerberos verifies SPNEGO tokens; nil refuses them.
	Kerberos *KerberosVerifier
	// Host maps principals to users, verifies delegation tokens and answers
	// AuthorizeProxy/IsAdmin. Required.
	Host *Host
}

// Authenticate implements Authenticator.
func (s *Secure) Authenticate(ctx context.Context, _ string) (context.Context, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	cred, err := ParseCredential(md.Get(MetadataKey))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnauthenticated, err)
	}
	remote := remoteAddr(ctx)
	switch cred.Scheme {
	case SchemeNegotiate:
		if s.Kerberos == nil {
			return nil, fmt.Errorf("%w: Kerberos is not configured on this service", ErrUnauthenticated)
		}
		principal, err := s.Kerberos.Verify(cred.SPNEGO)
		if err != nil {
			return nil, err
		}
		user, err := s.Host.MapPrincipal(ctx, principal)
		if err != nil {
			return nil, err
		}
		return NewContext(ctx, Identity{User: user, Principal: principal, Method: MethodKerberos}, remote, s.Host), nil
	case SchemeToken:
		o, err := s.Host.VerifyToken(ctx, cred.Token)
		if err != nil {
			return nil, err
		}
		return NewContext(ctx, Identity{User: o.User, Principal: o.Owner, Method: MethodToken}, remote, s.Host), nil
	}
	return nil, fmt.Errorf("%w: no credentials: send %q metadata with a Kerberos token (%s <base64 SPNEGO>) or an HDFS delegation token (%s <token>)",
		ErrUnauthenticated, MetadataKey, SchemeNegotiate, SchemeToken)
}

// Collector exports the host's delegation-token counters.
func (s *Secure) Collector() prometheus.Collector { return s.Host.Collector() }
