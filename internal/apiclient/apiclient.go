// Package apiclient is the connection the Go clients of the co-processes' public APIs share
// (namenode-ext's hintclient and mirrorclient): one they dial and own, or one a caller lends
// them, and its Close.
package apiclient

import (
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"
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
	owned *grpc.ClientConn
}

// Dial connects to addr (host:port), reconnecting as Reconnect says. Without opts it is plaintext, as the public APIs are
// served by default; opts come after that default, so authn.ClientConfig.DialOptions' TLS
// credentials replace it.
func Dial(addr string, opts ...grpc.DialOption) (*Conn, error) {
	opts = append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials()), Reconnect()}, opts...)
	cc, err := grpc.NewClient(addr, opts...)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	return &Conn{ClientConnInterface: cc, owned: cc}, nil
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
