package authn

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"strings"

	"github.com/jcmturner/gokrb5/v8/client"
	krbconfig "github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/credentials"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"google.golang.org/grpc"
	grpccreds "google.golang.org/grpc/credentials"
)

// ClientConfig is how a client (the CLI, a trainer) authenticates to a public API.
type ClientConfig struct {
	// CACert is a PEM file of the CA that signed the API's certificate; set, the client uses
	// TLS (required for Kerberos and tokens).
	CACert string
	// Krb5Conf, Keytab and Principal log in to Kerberos ("alice" or "alice@EXAMPLE.COM"; the
	// realm defaults to krb5.conf's default_realm). SPN is the API's service principal
	// ("newtricks/nn1.example.com").
	Krb5Conf, Keytab, Principal, SPN string
	// CCache, instead of Keytab, is a Kerberos ticket cache file (kinit's, FILE: form or a
	// path) whose ticket-granting ticket the client uses; Principal is then read from it.
	CCache string
	// Token is an HDFS delegation token in Hadoop's URL-safe string form.
	Token string
}

// Authenticated reports whether c proves an identity (Kerberos or a token).
func (c ClientConfig) Authenticated() bool { return c.Keytab != "" || c.CCache != "" || c.Token != "" }

// KerberosLogin logs in from c's keytab or ticket cache and returns the client and the
// credentials for c.SPN; callers Destroy the client when done.
func (c ClientConfig) KerberosLogin() (*client.Client, *KerberosCredentials, error) {
	if c.Keytab != "" && c.CCache != "" {
		return nil, nil, fmt.Errorf("%w: a keytab or a ticket cache, not both", ErrBadConfig)
	}
	if c.SPN == "" {
		return nil, nil, fmt.Errorf("%w: Kerberos needs the API's service principal (newtricks/<host>)", ErrBadConfig)
	}
	conf, err := krbconfig.Load(c.Krb5Conf)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: krb5.conf %s: %v", ErrBadConfig, c.Krb5Conf, err)
	}
	var cl *client.Client
	switch {
	case c.CCache != "":
		cc, err := credentials.LoadCCache(strings.TrimPrefix(c.CCache, "FILE:"))
		if err != nil {
			return nil, nil, fmt.Errorf("%w: ticket cache %s: %v", ErrBadConfig, c.CCache, err)
		}
		cl, err = client.NewFromCCache(cc, conf, client.DisablePAFXFAST(true))
		if err != nil {
			return nil, nil, fmt.Errorf("kerberos ticket cache %s: %w", c.CCache, err)
		}
	case c.Keytab != "":
		if c.Principal == "" {
			return nil, nil, fmt.Errorf("%w: a keytab needs the principal to log in as", ErrBadConfig)
		}
		kt, err := keytab.Load(c.Keytab)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: keytab %s: %v", ErrBadConfig, c.Keytab, err)
		}
		name, realm, _ := strings.Cut(c.Principal, "@")
		if realm == "" {
			realm = conf.LibDefaults.DefaultRealm
		}
		cl = client.NewWithKeytab(name, realm, kt, conf, client.DisablePAFXFAST(true))
		if err := cl.Login(); err != nil {
			return nil, nil, fmt.Errorf("kerberos login as %s@%s: %w", name, realm, err)
		}
	default:
		return nil, nil, fmt.Errorf("%w: Kerberos needs a keytab or a ticket cache", ErrBadConfig)
	}
	return cl, NewKerberosCredentials(cl, c.SPN), nil
}

// DialOptions returns the gRPC dial options for c and a function releasing the Kerberos
// login. Without CACert and credentials the options are empty (plaintext, simple).
func (c ClientConfig) DialOptions() ([]grpc.DialOption, func(), error) {
	noop := func() {}
	if (c.Keytab != "" || c.CCache != "") && c.Token != "" {
		return nil, noop, fmt.Errorf("%w: Kerberos or a token, not both", ErrBadConfig)
	}
	if c.Authenticated() && c.CACert == "" {
		return nil, noop, fmt.Errorf("%w: Kerberos and tokens need TLS: give the API's CA certificate", ErrBadConfig)
	}
	var opts []grpc.DialOption
	if c.CACert != "" {
		tc, err := c.TLSConfig()
		if err != nil {
			return nil, noop, err
		}
		opts = append(opts, grpc.WithTransportCredentials(grpccreds.NewTLS(tc)))
	}
	switch {
	case c.Token != "":
		if _, err := DecodeToken(c.Token); err != nil {
			return nil, noop, err
		}
		opts = append(opts, grpc.WithPerRPCCredentials(TokenCredentials{Token: c.Token}))
	case c.Keytab != "" || c.CCache != "":
		cl, creds, err := c.KerberosLogin()
		if err != nil {
			return nil, noop, err
		}
		opts = append(opts, grpc.WithPerRPCCredentials(creds))
		return opts, cl.Destroy, nil
	}
	return opts, noop, nil
}

// TLSConfig is the TLS configuration of c's connections: CACert's certificates as the roots,
// TLS 1.2 at least; nil without CACert (plaintext).
func (c ClientConfig) TLSConfig() (*tls.Config, error) {
	if c.CACert == "" {
		return nil, nil
	}
	pemBytes, err := os.ReadFile(c.CACert)
	if err != nil {
		return nil, fmt.Errorf("%w: CA certificate: %v", ErrBadConfig, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemBytes) {
		return nil, fmt.Errorf("%w: %s holds no PEM certificate", ErrBadConfig, c.CACert)
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}
