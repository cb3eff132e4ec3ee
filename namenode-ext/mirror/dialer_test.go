package mirror

import (
	"context"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/newtricks/newtricks/harness/wan"
)

// TestDialerThroughSocks: with a proxy configured every connection goes through it (the relay
// counts it) and carries bytes both ways; a proxy that is down fails with an error naming it.
func TestDialerThroughSocks(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	r, err := wan.Listen("127.0.0.1:0", wan.Link{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	c, err := newDialer(r.Addr())(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 4)
	if _, err := io.ReadFull(c, got); err != nil || string(got) != "ping" {
		t.Fatalf("echo through the proxy: %q, %v", got, err)
	}
	c.Close()
	if s := r.Stats(); s.Conns != 1 {
		t.Errorf("relay saw %d remote connections, want 1", s.Conns)
	}

	down := ln.Addr().String() // a plain echo server, not a SOCKS proxy
	if _, err := newDialer("127.0.0.1:1")(context.Background(), "tcp", down); err == nil ||
		!strings.Contains(err.Error(), "socks proxy 127.0.0.1:1") {
		t.Errorf("dial through a proxy that is down: %v, want an error naming the proxy", err)
	}
}
