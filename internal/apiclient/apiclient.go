// Package apiclient is the connection the Go clients of the co-processes' public APIs share
// (namenode-ext's hintclient and mirrorclient, the offload readers, datanode-ext): one they
// dial and own, or one a caller lends them, and its Close. Given several addresses (the
// namenode-ext of each NameNode of a nameservice) it is a Failover connection.
package apiclient

import (
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/newtricks/newtricks/internal/nsclient"
)

// Reconnect is the reconnect policy of every connection to a co-process: retries back off to
// at most one second. gRPC's default grows to two minutes, so a client that first dialed a
// co-process before it listened (a DataNode's datanode-ext starting before namenode-ext) or
// while the hook restarted it would not see it again for minutes, and its calls would fail
// at once meanwhile.
func Reconnect() grpc.DialOption {
	return grpc.WithConnectParams(grpc.ConnectParams{
		Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second},
		MinConnectTimeout: 2 * time.Second,
	})
}

// Conn is a client's connection to a public API. Close closes it only if Dial made it: a
// connection a caller lent (Wrap) stays the caller's to close.
type Conn struct {
	grpc.ClientConnInterface
	owned interface{ Close() error }
}

func defaults() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials()), Reconnect()}
}

// Dial connects to addr: host:port, or several comma-separated (SplitAddrs) for a Failover
// connection over them, reconnecting as Reconnect says. Without opts it is plaintext, as the
// public APIs are served by default; opts come after that default, so
// authn.ClientConfig.DialOptions' TLS credentials replace it. The same opts serve every
// address (a Kerberos service principal names one host: use DialEach for per-host ones).
func Dial(addr string, opts ...grpc.DialOption) (*Conn, error) {
	if strings.Contains(addr, ",") {
		addrs, err := SplitAddrs(addr)
		if err != nil {
			return nil, err
		}
		return DialAll(addrs, opts...)
	}
	cc, err := grpc.NewClient(addr, append(defaults(), opts...)...)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	return &Conn{ClientConnInterface: cc, owned: cc}, nil
}

// DialAll is a Failover connection over addrs (one address: a plain connection) with the same
// opts for each.
func DialAll(addrs []string, opts ...grpc.DialOption) (*Conn, error) {
	return DialConn(addrs, func(string) ([]grpc.DialOption, error) { return opts, nil })
}

// DialConn is DialAll with each address's own options (its TLS server name, its Kerberos
// service principal: authn.PerHost), after the plaintext and Reconnect defaults.
func DialConn(addrs []string, opts func(addr string) ([]grpc.DialOption, error)) (*Conn, error) {
	if len(addrs) == 1 {
		if !nsclient.ValidAddr(addrs[0]) {
			return nil, fmt.Errorf("%w: address %q is not host:port", ErrBadAddress, addrs[0])
		}
		o, err := opts(addrs[0])
		if err != nil {
			return nil, err
		}
		return Dial(addrs[0], o...)
	}
	f, err := DialEach(addrs, opts)
	if err != nil {
		return nil, err
	}
	return &Conn{ClientConnInterface: f, owned: f}, nil
}

// Wrap lends cc to a client without handing it over.
func Wrap(cc grpc.ClientConnInterface) *Conn { return &Conn{ClientConnInterface: cc} }

// Close closes the connection if Dial made it (a nil Conn is closed already).
func (c *Conn) Close() error {
	if c == nil || c.owned == nil {
		return nil
	}
	return c.owned.Close()
}
