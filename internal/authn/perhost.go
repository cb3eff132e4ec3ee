package authn

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"

	"github.com/jcmturner/gokrb5/v8/client"
	"google.golang.org/grpc"
	grpccreds "google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// ErrPlaintext: a credential would be sent to an API that does not serve TLS. Kerberos
// tickets and delegation tokens are bearer secrets for as long as they live: they are never
// written to a plaintext connection, whatever the caller asks.
var ErrPlaintext = errors.New("credentials never cross plaintext")

// PerHost makes the dial options for the public APIs of many hosts (the namenode-ext and
// every datanode-ext of a cluster) from one login: TLS with the host's name as the server
// name, and per-call credentials for the service principal whose pattern's _HOST is that
// host (newtricks/_HOST@EXAMPLE.COM, as Hadoop names its daemons), or one delegation token,
// the same to every host. datanode-ext uses it toward its peers and namenode-ext, and the
// offload reader toward all of them, so there is one copy of these rules.
type PerHost struct {
	// TLS is the base TLS configuration (its RootCAs); nil: plaintext unless Options is
	// asked for TLS, then the system's roots.
	TLS *tls.Config
	// Krb is a logged-in Kerberos client (nil: no Kerberos); Token a delegation token in
	// Hadoop's URL-safe form (""). At most one of them.
	Krb   *client.Client
	Token string

	mu    sync.Mutex
	creds map[string]*KerberosCredentials // by SPN: one per service, for its replay cache
}

// Proves reports whether p carries a credential (Kerberos or a token).
func (p *PerHost) Proves() bool { return p.Krb != nil || p.Token != "" }

// Options returns the dial options for an API on host: TLS when useTLS, with host as the
// server name; the per-call credential when p has one (refused with ErrPlaintext when the API
// does not serve TLS). pattern is the API's service principal; its _HOST is replaced with host
// (ReplaceHost: an address becomes its canonical name, as in Hadoop) and its realm dropped
// (gokrb5 asks its own realm for the service ticket).
func (p *PerHost) Options(host string, useTLS bool, pattern string) ([]grpc.DialOption, error) {
	if p.Proves() && !useTLS {
		return nil, fmt.Errorf("%w: %s does not serve TLS", ErrPlaintext, host)
	}
	if !useTLS {
		return []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, nil
	}
	base := p.TLS
	if base == nil {
		base = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	cfg := base.Clone()
	cfg.ServerName = host
	opts := []grpc.DialOption{grpc.WithTransportCredentials(grpccreds.NewTLS(cfg))}
	switch {
	case p.Krb != nil:
		if pattern == "" {
			return nil, fmt.Errorf("%w: Kerberos needs the service principal of the API on %s (newtricks/_HOST)", ErrBadConfig, host)
		}
		spn, err := ReplaceHost(pattern, host)
		if err != nil {
			return nil, err
		}
		spn, _, _ = strings.Cut(spn, "@")
		p.mu.Lock()
		if p.creds == nil {
			p.creds = map[string]*KerberosCredentials{}
		}
		c, ok := p.creds[spn]
		if !ok {
			c = NewKerberosCredentials(p.Krb, spn)
			p.creds[spn] = c
		}
		p.mu.Unlock()
		opts = append(opts, grpc.WithPerRPCCredentials(c))
	case p.Token != "":
		opts = append(opts, grpc.WithPerRPCCredentials(TokenCredentials{Token: p.Token}))
	}
	return opts, nil
}

// HostOf is the host of a host:port address (the address itself when it has no port).
func HostOf(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return addr
}

// HostPattern turns a service principal into its pattern: "newtricks/nn1.example.com@R"
// becomes "newtricks/_HOST@R" (a pattern stays as it is, a principal without a host too). The
// offload reader uses it for the datanode-ext nodes when it is given only namenode-ext's
// principal: every node's API has the same service name on its own host.
func HostPattern(spn string) string {
	if strings.Contains(spn, "_HOST") {
		return spn
	}
	name, realm, hasRealm := strings.Cut(spn, "@")
	svc, _, ok := strings.Cut(name, "/")
	if !ok {
		return spn
	}
	out := svc + "/_HOST"
	if hasRealm {
		out += "@" + realm
	}
	return out
}
