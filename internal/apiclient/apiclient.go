// Package apiclient is the connection the Go clients of the co-processes' public APIs share
// (namenode-ext's hintclient and mirrorclient): one they dial and own, or one a caller lends
// them, and its Close.
package apiclient

import (
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// Conn is a client's connection to a public API. Close closes it only if Dial made it: a
// connection a caller lent (Wrap) stays the caller's to close.
type Conn struct {
	grpc.ClientConnInterface
	owned *grpc.ClientConn
}

// Dial connects to addr (host:port). Without opts it is plaintext, as the public APIs are
// served by default; opts come after that default, so authn.ClientConfig.DialOptions' TLS
// credentials replace it.
func Dial(addr string, opts ...grpc.DialOption) (*Conn, error) {
	opts = append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, opts...)
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
