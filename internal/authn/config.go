package authn

import (
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// ErrBadConfig is wrapped by every configuration error of this package.
var ErrBadConfig = errors.New("bad security configuration")

// Configuration keys. The first is Hadoop's own; the others take the co-process's prefix
// ("newtricks.namenode.ext" or "newtricks.datanode.ext").
const (
	// KeyAuthentication is hadoop.security.authentication: "simple" or "kerberos". The public
	// APIs follow the cluster: Kerberos (and delegation tokens) on a Kerberized cluster.
	KeyAuthentication = "hadoop.security.authentication"
	// KeyPrincipal: <prefix>.kerberos.principal, the service principal clients ask tickets
	// for (e.g. newtricks/_HOST@EXAMPLE.COM; _HOST becomes the API's host name).
	KeyPrincipal = ".kerberos.principal"
	// KeyKeytab: <prefix>.kerberos.keytab, the keytab holding that principal's key, readable
	// only by the daemon's user.
	KeyKeytab = ".kerberos.keytab"
	// KeyTLSCert and KeyTLSKey: <prefix>.tls.cert and <prefix>.tls.key, PEM files of the
	// public API's certificate (chain) and private key. Required unless authentication is
	// simple; with simple authentication, TLS is used when both are set.
	KeyTLSCert = ".tls.cert"
	KeyTLSKey  = ".tls.key"
	// KeyRatePerUser: <prefix>.api.rate.per.user, calls per second one proven user may make
	// to the public API (not applied under simple authentication); 0 disables. Default
	// DefaultRatePerUser.
	KeyRatePerUser = ".api.rate.per.user"
	// KeyRateBurst: <prefix>.api.rate.burst, the calls such a caller may make at once.
	// Default DefaultRateBurst.
	KeyRateBurst = ".api.rate.burst"
)

// Config is how one co-process's public API authenticates its callers.
type Config struct {
	// Method is MethodSimple or MethodKerberos (KeyAuthentication; default simple, as Hadoop).
	Method Method
	// Principal and Keytab: KeyPrincipal and KeyKeytab (required with Kerberos).
	Principal string
	Keytab    string
	// TLSCert and TLSKey: KeyTLSCert and KeyTLSKey.
	TLSCert string
	TLSKey  string
	// RatePerUser and RateBurst: KeyRatePerUser and KeyRateBurst (RatePerUser 0: no limit).
	RatePerUser float64
	RateBurst   float64
	// AuthFailRate, AuthFailBurst, AuthFailCache: the failed-authentication guard
	// (failguard.go; AuthFailRate 0: off).
	AuthFailRate  float64
	AuthFailBurst float64
	AuthFailCache time.Duration
}

// ConfigFrom reads Config from the pushed configuration (get returns "" for unset keys).
func ConfigFrom(get func(key string) string, prefix string) Config {
	m := Method(strings.ToLower(strings.TrimSpace(get(KeyAuthentication))))
	if m == "" {
		m = MethodSimple
	}
	rate, burst := parseRate(get(prefix+KeyRatePerUser), DefaultRatePerUser), parseRate(get(prefix+KeyRateBurst), DefaultRateBurst)
	failCache := DefaultAuthFailCache
	if v := strings.TrimSpace(get(prefix + KeyAuthFailCache)); v != "" {
		failCache = -1
		if d, err := time.ParseDuration(v); err == nil {
			failCache = d
		} else if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
			failCache = time.Duration(ms) * time.Millisecond
		}
	}
	return Config{
		AuthFailRate:  parseRate(get(prefix+KeyAuthFailRate), DefaultAuthFailRate),
		AuthFailBurst: parseRate(get(prefix+KeyAuthFailBurst), DefaultAuthFailBurst),
		AuthFailCache: failCache,
		RatePerUser:   rate,
		RateBurst:     burst,
		Method:        m,
		Principal:     strings.TrimSpace(get(prefix + KeyPrincipal)),
		Keytab:        strings.TrimSpace(get(prefix + KeyKeytab)),
		TLSCert:       strings.TrimSpace(get(prefix + KeyTLSCert)),
		TLSKey:        strings.TrimSpace(get(prefix + KeyTLSKey)),
	}
}

// parseRate reads a rate key; an unparsable value becomes -1, which Validate reports.
func parseRate(v string, def float64) float64 {
	v = strings.TrimSpace(v)
	if v == "" {
		return def
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return -1
	}
	return f
}

// Validate reports the first problem of c.
func (c Config) Validate() error {
	switch c.Method {
	case MethodSimple:
	case MethodKerberos:
		if c.Principal == "" || c.Keytab == "" {
			return fmt.Errorf("%w: %s=kerberos needs <prefix>%s and <prefix>%s", ErrBadConfig, KeyAuthentication, KeyPrincipal, KeyKeytab)
		}
		if c.TLSCert == "" || c.TLSKey == "" {
			return fmt.Errorf("%w: %s=kerberos needs TLS on the public API: set <prefix>%s and <prefix>%s (credentials never cross plaintext)",
				ErrBadConfig, KeyAuthentication, KeyTLSCert, KeyTLSKey)
		}
	default:
		return fmt.Errorf("%w: %s=%q: want simple or kerberos", ErrBadConfig, KeyAuthentication, c.Method)
	}
	if c.RatePerUser < 0 || c.RateBurst < 0 {
		return fmt.Errorf("%w: <prefix>%s=%v and <prefix>%s=%v must be numbers >= 0", ErrBadConfig,
			KeyRatePerUser, c.RatePerUser, KeyRateBurst, c.RateBurst)
	}
	if c.AuthFailRate < 0 || c.AuthFailBurst < 0 || c.AuthFailCache < 0 {
		return fmt.Errorf("%w: <prefix>%s, <prefix>%s must be numbers >= 0 and <prefix>%s a duration", ErrBadConfig,
			KeyAuthFailRate, KeyAuthFailBurst, KeyAuthFailCache)
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return fmt.Errorf("%w: set both <prefix>%s and <prefix>%s, or neither", ErrBadConfig, KeyTLSCert, KeyTLSKey)
	}
	return nil
}

// Insecure reports whether callers' names are trusted (simple authentication).
func (c Config) Insecure() bool { return c.Method == MethodSimple }

// Server returns the authenticator and server options of a public API: the interceptors
// (ServerOptions) and, when configured, TLS. host is the co-process's connection to its
// daemon (SecurityHost); apiHost replaces _HOST in the principal.
func (c Config) Server(host grpc.ClientConnInterface, apiHost string) (Authenticator, []grpc.ServerOption, error) {
	if err := c.Validate(); err != nil {
		return nil, nil, err
	}
	h := NewHost(host)
	var a Authenticator = Simple{Imp: h}
	if c.Method == MethodKerberos {
		principal, err := ReplaceHost(c.Principal, apiHost)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %v", ErrBadConfig, err)
		}
		kv, err := NewKerberosVerifier(c.Keytab, principal)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %v", ErrBadConfig, err)
		}
		a = &Secure{Kerberos: kv, Host: h}
		if c.AuthFailRate > 0 {
			a = NewFailGuard(a, c.AuthFailRate, c.AuthFailBurst, c.AuthFailCache)
		}
	}
	opts := ServerOptions(a)
	if c.RatePerUser > 0 {
		opts = append(opts, NewRateLimiter(c.RatePerUser, max(c.RateBurst, 1)).ServerOptions()...)
	}
	if c.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(c.TLSCert, c.TLSKey)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: TLS certificate %s / key %s: %v", ErrBadConfig, c.TLSCert, c.TLSKey, err)
		}
		opts = append(opts, grpc.Creds(credentials.NewTLS(&tls.Config{
			Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})))
	}
	return a, opts, nil
}

// Check is Validate plus what an admin would find only at start-up: the keytab loads and
// holds the principal (with _HOST replaced by apiHost, or this machine's name), and the TLS
// certificate and key load and match. It returns the key to fix with the error.
func (c Config) Check(prefix, apiHost string) (string, error) {
	if err := c.Validate(); err != nil {
		switch {
		case c.Method != MethodSimple && c.Method != MethodKerberos:
			return KeyAuthentication, err
		case c.Method == MethodKerberos && c.Principal == "":
			return prefix + KeyPrincipal, err
		case c.Method == MethodKerberos && c.Keytab == "":
			return prefix + KeyKeytab, err
		case c.RatePerUser < 0:
			return prefix + KeyRatePerUser, err
		case c.RateBurst < 0:
			return prefix + KeyRateBurst, err
		case c.TLSKey == "" && c.TLSCert != "":
			return prefix + KeyTLSKey, err
		}
		return prefix + KeyTLSCert, err
	}
	if c.Method == MethodKerberos {
		principal, err := ReplaceHost(c.Principal, apiHost)
		if err != nil {
			return prefix + KeyPrincipal, err
		}
		if _, err := NewKerberosVerifier(c.Keytab, principal); err != nil {
			return prefix + KeyKeytab, err
		}
	}
	if c.TLSCert != "" {
		if _, err := tls.LoadX509KeyPair(c.TLSCert, c.TLSKey); err != nil {
			return prefix + KeyTLSCert, fmt.Errorf("TLS certificate %s / key %s: %w", c.TLSCert, c.TLSKey, err)
		}
	}
	return "", nil
}
