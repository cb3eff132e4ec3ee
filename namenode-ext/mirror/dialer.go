package mirror

import (
	"context"
	"fmt"
	"net"

	"golang.org/x/net/proxy"
)

// dialFunc opens a connection to a NameNode or DataNode (colinmarc/hdfs's dial functions).
type dialFunc = func(ctx context.Context, network, addr string) (net.Conn, error)

// newDialer returns how the mirror reaches dc-b: directly, or through the SOCKS5 proxy at socks
// (newtricks.mirror.dest.socks-proxy, host:port, no authentication), as sites route WAN
// traffic through a gateway. The proxy resolves the DataNode names dc-b's NameNode returns.
func newDialer(socks string) dialFunc {
	direct := &net.Dialer{}
	if socks == "" {
		return direct.DialContext
	}
	d, _ := proxy.SOCKS5("tcp", socks, nil, direct) // never fails: it only records its arguments
	cd := d.(proxy.ContextDialer)
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := cd.DialContext(ctx, network, addr)
		if err != nil {
			return nil, fmt.Errorf("via socks proxy %s: %w", socks, err)
		}
		return c, nil
	}
}
