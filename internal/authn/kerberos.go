package authn

import (
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/jcmturner/gokrb5/v8/client"
	"github.com/jcmturner/gokrb5/v8/credentials"
	"github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/service"
	"github.com/jcmturner/gokrb5/v8/spnego"
)

// gokrb5 stores the verified credentials under this (unexported, untyped string) key.
const gokrb5Credentials = "github.com/jcmturner/gokrb5/v8/ctxCredentials"

// KerberosVerifier accepts SPNEGO tokens for one service principal, checked with its keytab:
// the ticket must be encrypted with that principal's key, be within its lifetime and the
// clock skew, and its authenticator must not have been seen before (gokrb5's replay cache).
type KerberosVerifier struct {
	principal string
	spnego    *spnego.SPNEGO
}

// NewKerberosVerifier loads keytabPath and returns a verifier for principal
// ("newtricks/host.example.com@EXAMPLE.COM"; the realm may be omitted). The keytab must hold a
// key for it.
func NewKerberosVerifier(keytabPath, principal string) (*KerberosVerifier, error) {
	kt, err := keytab.Load(keytabPath)
	if err != nil {
		return nil, fmt.Errorf("load keytab %s: %w", keytabPath, err)
	}
	return NewKerberosVerifierKeytab(kt, principal)
}

// NewKerberosVerifierKeytab is NewKerberosVerifier with a loaded keytab.
func NewKerberosVerifierKeytab(kt *keytab.Keytab, principal string) (*KerberosVerifier, error) {
	name, realm, _ := strings.Cut(principal, "@")
	if name == "" {
		return nil, fmt.Errorf("empty Kerberos service principal")
	}
	found := false
	for _, e := range kt.Entries {
		if e.Principal.String() == name+"@"+e.Principal.Realm && (realm == "" || e.Principal.Realm == realm) {
			found = true
			break
		}
	}
	if !found {
		return nil, fmt.Errorf("keytab holds no key for %s", principal)
	}
	// KeytabPrincipal pins the key: a ticket for any other service in the same keytab fails.
	s := spnego.SPNEGOService(kt, service.KeytabPrincipal(name), service.MaxClockSkew(5*time.Minute),
		service.DecodePAC(false))
	return &KerberosVerifier{principal: principal, spnego: s}, nil
}

// Verify checks a SPNEGO token and returns the client's principal ("alice@EXAMPLE.COM").
// Every failure wraps ErrUnauthenticated.
func (v *KerberosVerifier) Verify(token []byte) (string, error) {
	var st spnego.SPNEGOToken
	if err := st.Unmarshal(token); err != nil {
		return "", fmt.Errorf("%w: not a SPNEGO token: %v", ErrUnauthenticated, err)
	}
	ok, ctx, status := v.spnego.AcceptSecContext(&st)
	// A KRB_ERROR mech token "verifies" with StatusUnavailable: only StatusComplete with
	// authenticated credentials is an identity.
	if !ok || status.Code != gssapi.StatusComplete || ctx == nil {
		return "", fmt.Errorf("%w: Kerberos token for %s rejected: %s", ErrUnauthenticated, v.principal, status.Message)
	}
	creds, _ := ctx.Value(gokrb5Credentials).(*credentials.Credentials)
	if creds == nil || !creds.Authenticated() || creds.UserName() == "" {
		return "", fmt.Errorf("%w: Kerberos token without an authenticated client", ErrUnauthenticated)
	}
	return creds.CName().PrincipalNameString() + "@" + creds.Domain(), nil
}

// KerberosCredentials are client-side gRPC per-call credentials: a fresh SPNEGO token for
// the service principal ("newtricks/host.example.com") on every call, from a logged-in gokrb5
// client. Build them with NewKerberosCredentials and share one per client: services keep a
// replay cache keyed on the client and the authenticator's time to the microsecond, so tokens
// made concurrently in the same microsecond would be refused as replays; one
// KerberosCredentials never makes two in the same microsecond.
type KerberosCredentials struct {
	client *client.Client
	spn    string

	mu   sync.Mutex
	last int64 // UnixMicro of the last token
}

// NewKerberosCredentials returns credentials for calls to the service spn as cl's principal.
func NewKerberosCredentials(cl *client.Client, spn string) *KerberosCredentials {
	return &KerberosCredentials{client: cl, spn: spn}
}

// GetRequestMetadata implements credentials.PerRPCCredentials.
func (k *KerberosCredentials) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	k.mu.Lock()
	for time.Now().UnixMicro() <= k.last {
		time.Sleep(time.Microsecond)
	}
	s := spnego.SPNEGOClient(k.client, k.spn)
	tok, err := s.InitSecContext()
	k.last = time.Now().UnixMicro()
	k.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("kerberos: service ticket for %s: %w", k.spn, err)
	}
	b, err := tok.Marshal()
	if err != nil {
		return nil, fmt.Errorf("kerberos: marshal SPNEGO token: %w", err)
	}
	return map[string]string{MetadataKey: SchemeNegotiate + " " + base64.StdEncoding.EncodeToString(b)}, nil
}

// RequireTransportSecurity implements credentials.PerRPCCredentials: tokens go only over TLS.
func (*KerberosCredentials) RequireTransportSecurity() bool { return true }

// TokenCredentials are client-side gRPC per-call credentials carrying an HDFS delegation
// token (Token.Encode form).
type TokenCredentials struct{ Token string }

// GetRequestMetadata implements credentials.PerRPCCredentials.
func (t TokenCredentials) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{MetadataKey: SchemeToken + " " + t.Token}, nil
}

// RequireTransportSecurity implements credentials.PerRPCCredentials.
func (TokenCredentials) RequireTransportSecurity() bool { return true }

// ReplaceHost substitutes _HOST in a principal with host (lower-cased), or with this
// machine's hostname when host is empty, as Hadoop's SecurityUtil.getServerPrincipal does.
func ReplaceHost(principal, host string) (string, error) {
	if !strings.Contains(principal, "_HOST") {
		return principal, nil
	}
	if ip := net.ParseIP(host); ip != nil && !ip.IsUnspecified() {
		// Hadoop uses the address's canonical name; so do we when DNS has one.
		if names, err := net.LookupAddr(host); err == nil && len(names) > 0 {
			host = strings.TrimSuffix(names[0], ".")
		}
	}
	if host == "" || net.ParseIP(host) != nil && net.ParseIP(host).IsUnspecified() {
		h, err := os.Hostname()
		if err != nil {
			return "", fmt.Errorf("principal %s: hostname: %w", principal, err)
		}
		host = h
	}
	return strings.ReplaceAll(principal, "_HOST", strings.ToLower(host)), nil
}
