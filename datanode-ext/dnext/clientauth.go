package dnext

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"os/user"
	"strings"
	"sync"

	"github.com/jcmturner/gokrb5/v8/client"
	krbconfig "github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"google.golang.org/grpc"

	"github.com/newtricks/newtricks/datanode-ext/offload"
	"github.com/newtricks/newtricks/internal/authn"
	"github.com/newtricks/newtricks/internal/coproc"
)

// clientAuth is how datanode-ext authenticates when it calls namenode-ext and other
// datanode-ext nodes: on a Kerberized cluster over TLS with a SPNEGO token of its own
// principal (its keytab, <prefix>.kerberos.*) per call, as the CLI does with its user's;
// under simple authentication in plaintext unless a CA is configured (then TLS).
type clientAuth struct {
	secure bool
	tls    *tls.Config // nil: plaintext
	// principal is datanode-ext's own principal pattern (the peers' service principals have
	// the same form); nnPrincipal namenode-ext's.
	principal, nnPrincipal string
	krb                    *client.Client

	// hosts makes the options per API host (TLS server name, SPN with its _HOST), with the
	// same rules as the offload reader's (authn.PerHost).
	hostsOnce sync.Once
	hosts     *authn.PerHost
}

// newClientAuth reads the security keys; apiHost is this node's API host (the _HOST of its
// own principal, as its authenticator uses it).
func newClientAuth(conf coproc.Conf, cfg Config, apiHost string) (*clientAuth, error) {
	sec := authn.ConfigFrom(func(k string) string { return conf[k] }, Prefix)
	a := &clientAuth{secure: sec.Method == authn.MethodKerberos, principal: sec.Principal, nnPrincipal: cfg.NameNodePrincipal}
	if a.nnPrincipal == "" {
		a.nnPrincipal = a.principal
	}
	if cfg.ClientCA != "" || a.secure {
		a.tls = &tls.Config{MinVersion: tls.VersionTLS12}
		if cfg.ClientCA != "" {
			pemBytes, err := os.ReadFile(cfg.ClientCA)
			if err != nil {
				return nil, fmt.Errorf("%w: %s: %v", coproc.ErrBadConfig, KeyClientCA, err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pemBytes) {
				return nil, fmt.Errorf("%w: %s: %s holds no PEM certificate", coproc.ErrBadConfig, KeyClientCA, cfg.ClientCA)
			}
			a.tls.RootCAs = pool
		}
	}
	if !a.secure {
		return a, nil
	}
	if sec.Principal == "" || sec.Keytab == "" {
		return nil, fmt.Errorf("%w: kerberos needs %s%s and %s%s for datanode-ext's own calls", coproc.ErrBadConfig, Prefix, authn.KeyPrincipal, Prefix, authn.KeyKeytab)
	}
	own, err := authn.ReplaceHost(sec.Principal, apiHost)
	if err != nil {
		return nil, err
	}
	kc, err := krbconfig.Load(cfg.Krb5Conf)
	if err != nil {
		return nil, fmt.Errorf("%w: %s %s: %v", coproc.ErrBadConfig, KeyKrb5Conf, cfg.Krb5Conf, err)
	}
	kt, err := keytab.Load(sec.Keytab)
	if err != nil {
		return nil, fmt.Errorf("%w: keytab %s: %v", coproc.ErrBadConfig, sec.Keytab, err)
	}
	name, realm, _ := strings.Cut(own, "@")
	if realm == "" {
		realm = kc.LibDefaults.DefaultRealm
	}
	a.krb = client.NewWithKeytab(name, realm, kt, kc, client.DisablePAFXFAST(true))
	if err := a.krb.Login(); err != nil {
		return nil, fmt.Errorf("kerberos login as %s@%s: %w", name, realm, err)
	}
	return a, nil
}

// self is the user datanode-ext names when it calls for itself: its OS user under simple
// authentication, nobody with Kerberos (the proven principal is the caller).
func (a *clientAuth) self() string {
	if a.secure {
		return ""
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "datanode-ext"
}

// options returns the dial options for an API on host: TLS when useTLS (required with
// Kerberos), and per-call SPNEGO credentials for the service principal pattern's _HOST = host.
func (a *clientAuth) options(host string, useTLS bool, pattern string) ([]grpc.DialOption, error) {
	if a.secure && !useTLS {
		return nil, fmt.Errorf("%w: %s does not serve TLS, and Kerberos credentials never cross plaintext", offload.ErrUnavailable, host)
	}
	a.hostsOnce.Do(func() { a.hosts = &authn.PerHost{TLS: a.tls, Krb: a.krb} })
	opts, err := a.hosts.Options(host, useTLS, pattern)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", offload.ErrUnavailable, err)
	}
	return opts, nil
}

// forNameNode gives the options for a namenode-ext address.
func (a *clientAuth) forNameNode(addr string) ([]grpc.DialOption, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	return a.options(host, a.tls != nil, a.nnPrincipal)
}

// forPeer gives the options for another datanode-ext, as the directory listed it.
func (a *clientAuth) forPeer(ep offload.Endpoint) ([]grpc.DialOption, error) {
	host := ep.Hostname
	if host == "" {
		host, _, _ = net.SplitHostPort(ep.Addr)
	}
	return a.options(host, ep.TLS, a.principal)
}

func (a *clientAuth) close() {
	if a.krb != nil {
		a.krb.Destroy()
	}
}
