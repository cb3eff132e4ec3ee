package reader

import (
	"fmt"
	"strings"

	"github.com/colinmarc/hdfs/v2"
	"github.com/jcmturner/gokrb5/v8/client"
	"google.golang.org/grpc"

	"github.com/newtricks/newtricks/internal/apiclient"
	"github.com/newtricks/newtricks/internal/authn"
)

// ErrTokenHDFS: a delegation token was given for the reader's HDFS reads. colinmarc/hdfs (the
// reader's HDFS client) authenticates its NameNode RPC with Kerberos only, not with a
// delegation token, so on a Kerberized cluster the index and fallback reads need a keytab or a
// ticket cache; the token serves namenode-ext and datanode-ext.
var ErrTokenHDFS = fmt.Errorf("%w: colinmarc/hdfs does not authenticate HDFS RPC with a delegation token: "+
	"the index and fallback reads need a keytab or a ticket cache", ErrConfig)

// Auth is how a reader proves who it is on a Kerberized cluster: the same credentials as
// the CLI's hints and mirror (authn.ClientConfig: the CA of the APIs' certificates, a keytab
// and principal, or a ticket cache, or a delegation token), plus the service principals of
// the daemons it calls.
type Auth struct {
	authn.ClientConfig
	// SPN (in ClientConfig) is namenode-ext's service principal: "newtricks/_HOST@REALM"
	// (_HOST becomes the host of namenode-ext's address, its canonical name for an IP) or
	// "newtricks/nn1.example.com". NodeSPN is the datanode-ext nodes' (their
	// newtricks.datanode.ext.kerberos.principal), whose _HOST becomes each node's host name as
	// namenode-ext's directory lists it; default: SPN with its host made _HOST.
	NodeSPN string
	// HDFSSPN is the NameNode's principal (dfs.namenode.kerberos.principal; default
	// "hdfs/_HOST", _HOST becoming the NameNode's host) for the reader's HDFS reads.
	HDFSSPN string
	// DataTransferProtection is the SASL protection of the HDFS reads from DataNodes
	// (dfs.data.transfer.protection: "authentication", "integrity" or "privacy"; default
	// "authentication" with Kerberos, as a secure cluster without privileged ports needs).
	DataTransferProtection string
}

// Credentials are a reader's logged-in Auth, shared by every connection it makes: to
// namenode-ext (locations and the directory: DialNameNodeExt), to each datanode-ext node (TLS
// with the node's host name as the server name, a SPNEGO token for the node's own service
// principal on every call, or the same delegation token to every node), and to HDFS
// (HDFSClient). Kerberos tickets and tokens never cross plaintext: a node that does not
// serve TLS is refused (Stats.NodeError says so) and its samples are read from HDFS.
// Credentials may be shared by several readers; Close them after the last.
type Credentials struct {
	auth  Auth
	hosts *authn.PerHost
	krb   *client.Client
}

// NewCredentials checks a and logs in to Kerberos (from the keytab or the ticket cache) once.
// An Auth without CACert and without a credential is simple authentication in plaintext
// (the reader's default); with CACert only, the connections use TLS without proving anyone.
func NewCredentials(a Auth) (*Credentials, error) {
	krb := a.Keytab != "" || a.CCache != ""
	switch {
	case krb && a.Token != "":
		return nil, fmt.Errorf("%w: Kerberos or a delegation token, not both", ErrConfig)
	case a.Keytab != "" && a.CCache != "":
		return nil, fmt.Errorf("%w: a keytab or a ticket cache, not both", ErrConfig)
	case a.Authenticated() && a.CACert == "":
		return nil, fmt.Errorf("%w: Kerberos and delegation tokens need TLS: give the CA certificate of the APIs (credentials never cross plaintext)", ErrConfig)
	case krb && a.SPN == "":
		return nil, fmt.Errorf("%w: Kerberos needs namenode-ext's service principal (e.g. newtricks/_HOST)", ErrConfig)
	}
	switch a.DataTransferProtection {
	case "", hdfs.DataTransferProtectionAuthentication, hdfs.DataTransferProtectionIntegrity, hdfs.DataTransferProtectionPrivacy:
	default:
		return nil, fmt.Errorf("%w: data transfer protection %q: want authentication, integrity or privacy", ErrConfig, a.DataTransferProtection)
	}
	if a.NodeSPN == "" {
		a.NodeSPN = authn.HostPattern(a.SPN)
	}
	if a.HDFSSPN == "" {
		a.HDFSSPN = "hdfs/_HOST"
	}
	if krb && a.DataTransferProtection == "" {
		a.DataTransferProtection = hdfs.DataTransferProtectionAuthentication
	}
	tc, err := a.TLSConfig()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	c := &Credentials{auth: a, hosts: &authn.PerHost{TLS: tc, Token: a.Token}}
	if a.Token != "" {
		if _, err := authn.DecodeToken(a.Token); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrConfig, err)
		}
	}
	if krb {
		cl, _, err := a.KerberosLogin()
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrConfig, err)
		}
		c.krb, c.hosts.Krb = cl, cl
	}
	return c, nil
}

// Proves reports whether c carries a credential (Kerberos or a token): then a reader's
// calls act as the authenticated caller and Config.User may be empty.
func (c *Credentials) Proves() bool { return c != nil && c.hosts.Proves() }

// Principal is the logged-in Kerberos principal ("alice@EXAMPLE.COM"), or "".
func (c *Credentials) Principal() string {
	if c == nil || c.krb == nil || c.krb.Credentials == nil {
		return ""
	}
	return c.krb.Credentials.CName().PrincipalNameString() + "@" + c.krb.Credentials.Realm()
}

// tls reports whether c's connections use TLS.
func (c *Credentials) tls() bool { return c.auth.CACert != "" }

// DialNameNodeExt connects to namenode-ext's public API at addrs (host:port; an HA
// nameservice's every NameNode's, over which calls fail over: apiclient.Failover) with c: TLS
// with each address's host as the server name, and the per-call credential for SPN (its _HOST
// that host).
func (c *Credentials) DialNameNodeExt(addrs ...string) (*apiclient.Conn, error) {
	return apiclient.DialConn(addrs, func(addr string) ([]grpc.DialOption, error) {
		opts, err := c.hosts.Options(authn.HostOf(addr), c.tls(), c.auth.SPN)
		if err != nil {
			return nil, fmt.Errorf("namenode-ext %s: %w", addr, err)
		}
		return opts, nil
	})
}

// dialNode connects to a datanode-ext as the directory lists it (its host name is the TLS
// server name and the _HOST of NodeSPN). A node given by address only (Config.Nodes) is
// expected to serve TLS when c does.
func (c *Credentials) dialNode(ep Endpoint) (*grpc.ClientConn, error) {
	host := ep.Hostname
	if host == "" {
		host = authn.HostOf(ep.Addr)
	}
	useTLS := ep.TLS || ep.UUID == "" && c.tls()
	opts, err := c.hosts.Options(host, useTLS, c.auth.NodeSPN)
	if err != nil {
		return nil, fmt.Errorf("datanode-ext %s: %w", ep.Addr, err)
	}
	return grpc.NewClient(ep.Addr, append(append(DialOptions(), opts...), apiclient.Reconnect())...)
}

// HDFSOptions are the colinmarc/hdfs client options of the reader's HDFS reads (the
// indexes, and samples on fallback) at the NameNode addresses: Kerberos as the logged-in
// principal with HDFSSPN and SASL data transfer, or, without credentials, simple
// authentication as user. With a delegation token it returns ErrTokenHDFS.
func (c *Credentials) HDFSOptions(addrs []string, user string) (hdfs.ClientOptions, error) {
	o := hdfs.ClientOptions{Addresses: addrs, User: user}
	if c == nil {
		return o, nil
	}
	switch {
	case c.krb != nil:
		return KerberosHDFSOptions(c.krb, addrs, c.auth.HDFSSPN, c.auth.DataTransferProtection)
	case c.auth.Token != "":
		return o, ErrTokenHDFS
	}
	return o, nil
}

// KerberosHDFSOptions are colinmarc/hdfs options for the NameNode addresses as the logged-in
// cl: spn is the NameNode's principal pattern (default "hdfs/_HOST"; _HOST becomes the
// NameNode's canonical host name, as in Hadoop, when there is one address, and each
// address's host with several), protection the SASL data transfer protection (default
// "authentication"). Credentials.HDFSOptions and the CLI's dataset commands use it.
func KerberosHDFSOptions(cl *client.Client, addrs []string, spn, protection string) (hdfs.ClientOptions, error) {
	if spn == "" {
		spn = "hdfs/_HOST"
	}
	if protection == "" {
		protection = hdfs.DataTransferProtectionAuthentication
	}
	if len(addrs) == 1 {
		var err error
		if spn, err = authn.ReplaceHost(spn, authn.HostOf(addrs[0])); err != nil {
			return hdfs.ClientOptions{}, fmt.Errorf("%w: %v", ErrConfig, err)
		}
	}
	spn, _, _ = strings.Cut(spn, "@") // gokrb5 asks its own realm for the service ticket
	// No User: the principal is the user.
	return hdfs.ClientOptions{Addresses: addrs, KerberosClient: cl, KerberosServicePrincipleName: spn,
		DataTransferProtection: protection}, nil
}

// HDFSClient connects the reader's HDFS client (HDFSOptions).
func (c *Credentials) HDFSClient(addrs []string, user string) (*hdfs.Client, error) {
	o, err := c.HDFSOptions(addrs, user)
	if err != nil {
		return nil, err
	}
	cl, err := hdfs.NewClient(o)
	if err != nil {
		return nil, fmt.Errorf("connect to NameNode %s: %w", strings.Join(addrs, ","), err)
	}
	return cl, nil
}

// Close destroys the Kerberos login.
func (c *Credentials) Close() {
	if c != nil && c.krb != nil {
		c.krb.Destroy()
	}
}
