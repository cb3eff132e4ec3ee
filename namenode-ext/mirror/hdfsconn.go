package mirror

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"

	"github.com/colinmarc/hdfs/v2"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/newtricks/newtricks/internal/wan"
)

type dialFunc = func(ctx context.Context, network, addr string) (net.Conn, error)

// proxyUserDial wraps dial so that the NameNode connection's IpcConnectionContext names
// realUser as the real user of the effective user colinmarc/hdfs sends: Hadoop then applies
// its proxy-user rules (ProxyUsers.authorize for hadoop.proxyuser.<realUser>.*) and runs every
// call as the effective user. colinmarc/hdfs v2.4.0 has no option for it, so the second write
// of a connection (the handshake's context packet, after the 7-byte "hrpc" header with auth
// protocol NONE) is rewritten. Kerberos connections (auth protocol SASL) are left alone.
func proxyUserDial(dial dialFunc, realUser string) dialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &proxyConn{Conn: c, realUser: realUser}, nil
	}
}

type proxyConn struct {
	net.Conn
	realUser string
	writes   int
	simple   bool
}

func (c *proxyConn) Write(b []byte) (int, error) {
	c.writes++
	switch c.writes {
	case 1:
		c.simple = len(b) == 7 && string(b[:4]) == "hrpc" && b[6] == 0
	case 2:
		if c.simple {
			nb, err := addRealUser(b, c.realUser)
			if err != nil {
				return 0, fmt.Errorf("proxy-user handshake: %w", err)
			}
			if _, err := c.Conn.Write(nb); err != nil {
				return 0, err
			}
			return len(b), nil
		}
	}
	return c.Conn.Write(b)
}

// addRealUser rewrites an RPC packet [len][delimited RpcRequestHeaderProto][delimited
// IpcConnectionContextProto] so that userInfo (field 2) carries realUser (field 2 of
// UserInformationProto).
func addRealUser(packet []byte, realUser string) ([]byte, error) {
	if len(packet) < 4 || int(binary.BigEndian.Uint32(packet)) != len(packet)-4 {
		return nil, errors.New("not a single RPC packet")
	}
	body := packet[4:]
	hl, n := protowire.ConsumeVarint(body)
	if n < 0 || int(hl) > len(body)-n {
		return nil, errors.New("bad request header")
	}
	hdr := body[:n+int(hl)]
	rest := body[n+int(hl):]
	cl, m := protowire.ConsumeVarint(rest)
	if m < 0 || int(cl) != len(rest)-m {
		return nil, errors.New("bad connection context")
	}
	ctxMsg := rest[m:]
	var out []byte
	found := false
	for len(ctxMsg) > 0 {
		num, typ, tn := protowire.ConsumeTag(ctxMsg)
		if tn < 0 {
			return nil, errors.New("bad connection context field")
		}
		fl := protowire.ConsumeFieldValue(num, typ, ctxMsg[tn:])
		if fl < 0 {
			return nil, errors.New("bad connection context value")
		}
		if num == 2 && typ == protowire.BytesType {
			ui, _ := protowire.ConsumeBytes(ctxMsg[tn:])
			ui = protowire.AppendTag(append([]byte(nil), ui...), 2, protowire.BytesType)
			ui = protowire.AppendString(ui, realUser)
			out = protowire.AppendTag(out, 2, protowire.BytesType)
			out = protowire.AppendBytes(out, ui)
			found = true
		} else {
			out = append(out, ctxMsg[:tn+fl]...)
		}
		ctxMsg = ctxMsg[tn+fl:]
	}
	if !found {
		return nil, errors.New("connection context has no user")
	}
	nb := make([]byte, 4, 4+len(hdr)+len(out)+8)
	nb = append(nb, hdr...)
	nb = protowire.AppendVarint(nb, uint64(len(out)))
	nb = append(nb, out...)
	binary.BigEndian.PutUint32(nb, uint32(len(nb)-4))
	return nb, nil
}

// clientPool hands out colinmarc/hdfs clients of one cluster, per effective user. A client
// runs one NameNode call at a time, so every transfer in flight needs its own.
type clientPool struct {
	addr      string
	realUser  string // "" = connect as the user itself (dc-a superuser for the journal)
	dial      dialFunc
	mu        sync.Mutex
	free      map[string][]*hdfs.Client
	maxIdle   int
	connected int64
}

func newClientPool(addr, realUser, socks string, maxIdle int) *clientPool {
	var d dialFunc = (&net.Dialer{}).DialContext
	if socks != "" {
		d = wan.Dialer(socks)
	}
	return &clientPool{addr: addr, realUser: realUser, dial: d, free: map[string][]*hdfs.Client{}, maxIdle: maxIdle}
}

func (p *clientPool) get(user string) (*hdfs.Client, error) {
	p.mu.Lock()
	if l := p.free[user]; len(l) > 0 {
		c := l[len(l)-1]
		p.free[user] = l[:len(l)-1]
		p.mu.Unlock()
		return c, nil
	}
	p.connected++
	p.mu.Unlock()
	nn := p.dial
	if p.realUser != "" && p.realUser != user {
		nn = proxyUserDial(p.dial, p.realUser)
	}
	c, err := hdfs.NewClient(hdfs.ClientOptions{
		Addresses: []string{p.addr}, User: user,
		NamenodeDialFunc: nn, DatanodeDialFunc: p.dial,
	})
	if err != nil {
		return nil, fmt.Errorf("connect to %s as %s: %w", p.addr, user, err)
	}
	return c, nil
}

// put returns a healthy client; bad clients (after a connection error) are closed instead.
func (p *clientPool) put(user string, c *hdfs.Client, healthy bool) {
	if c == nil {
		return
	}
	p.mu.Lock()
	if healthy && len(p.free[user]) < p.maxIdle {
		p.free[user] = append(p.free[user], c)
		c = nil
	}
	p.mu.Unlock()
	if c != nil {
		c.Close()
	}
}

func (p *clientPool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range p.free {
		for _, c := range l {
			c.Close()
		}
	}
	p.free = map[string][]*hdfs.Client{}
}
