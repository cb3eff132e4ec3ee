package mirror

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"

	"github.com/colinmarc/hdfs/v2"
	krbclient "github.com/jcmturner/gokrb5/v8/client"
	krbconfig "github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"google.golang.org/protobuf/encoding/protowire"
)

// proxyUserDial wraps dial so that the NameNode connection's IpcConnectionContext names
// realUser as the real user of the effective user colinmarc/hdfs sends: Hadoop then applies
// its proxy-user rules (ProxyUsers.authorize for hadoop.proxyuser.<realUser>.*) and runs every
// call as the effective user. colinmarc/hdfs v2.4.0 has no option for it, so the second write
// of a connection (the handshake's context packet, after the 7-byte "hrpc" header with auth
// protocol NONE) is rewritten. A Kerberos connection (auth protocol SASL) is refused: there
// the real user is the authenticated principal (kerberosProxyDial).
func proxyUserDial(dial dialFunc, realUser string) dialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &proxyConn{Conn: c, realUser: realUser}, nil
	}
}

// kerberosProxyDial wraps dial for a connection authenticated with Kerberos (SASL) as the
// mirror's own principal: the connection context colinmarc/hdfs sends after the SASL exchange
// names that principal as the effective user; it is rewritten to name effective (the
// checkpoint's owner) instead, as Hadoop's own client does for a proxy user
// (ProtoUtil.makeIpcConnectionContext sends only the effective user under KERBEROS). The
// NameNode then sees an effective user that differs from the authenticated one and makes it a
// proxy user of the principal, authorized by hadoop.proxyuser.<principal's short name>.*.
func kerberosProxyDial(dial dialFunc, effective string) dialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &proxyConn{Conn: c, effective: effective}, nil
	}
}

type proxyConn struct {
	net.Conn
	realUser  string // simple: added as the context's real user
	effective string // kerberos: replaces the context's effective user
	writes    int
	simple    bool
	sasl      bool
	done      bool
}

func (c *proxyConn) Write(b []byte) (int, error) {
	c.writes++
	if c.writes == 1 {
		c.simple = len(b) == 7 && string(b[:4]) == "hrpc" && b[6] == 0
		c.sasl = len(b) == 7 && string(b[:4]) == "hrpc" && b[6] == 0xdf
		switch {
		case c.effective != "" && !c.sasl:
			return 0, errors.New("proxy-user handshake: expected a Kerberos (SASL) connection")
		case c.realUser != "" && !c.simple:
			return 0, errors.New("proxy-user handshake: expected a simple-auth connection")
		}
		return c.Conn.Write(b)
	}
	var nb []byte
	var err error
	switch {
	case c.done:
		return c.Conn.Write(b)
	case c.simple && c.writes == 2:
		nb, err = addRealUser(b, c.realUser)
		c.done = true
	case c.sasl:
		// SASL messages (call id -33) pass; the first packet with the handshake's call id
		// (-3) is the connection context.
		var ok bool
		nb, ok, err = setEffectiveUser(b, c.effective)
		if err == nil && !ok {
			return c.Conn.Write(b)
		}
		c.done = true
	default:
		return c.Conn.Write(b)
	}
	if err != nil {
		return 0, fmt.Errorf("proxy-user handshake: %w", err)
	}
	if _, err := c.Conn.Write(nb); err != nil {
		return 0, err
	}
	return len(b), nil
}

// splitPacket splits an RPC packet [len][delimited RpcRequestHeaderProto][delimited body].
func splitPacket(packet []byte) (hdr, body []byte, err error) {
	if len(packet) < 4 || int(binary.BigEndian.Uint32(packet)) != len(packet)-4 {
		return nil, nil, errors.New("not a single RPC packet")
	}
	p := packet[4:]
	hl, n := protowire.ConsumeVarint(p)
	if n < 0 || int(hl) > len(p)-n {
		return nil, nil, errors.New("bad request header")
	}
	hdr = p[:n+int(hl)]
	rest := p[n+int(hl):]
	cl, m := protowire.ConsumeVarint(rest)
	if m < 0 || int(cl) != len(rest)-m {
		return nil, nil, errors.New("bad packet body")
	}
	return hdr, rest[m:], nil
}

// callID reads RpcRequestHeaderProto.callId (field 3, sint32) of a delimited header.
func callID(hdr []byte) (int64, bool) {
	_, n := protowire.ConsumeVarint(hdr)
	h := hdr[n:]
	for len(h) > 0 {
		num, typ, tn := protowire.ConsumeTag(h)
		if tn < 0 {
			return 0, false
		}
		if num == 3 && typ == protowire.VarintType {
			v, vn := protowire.ConsumeVarint(h[tn:])
			if vn < 0 {
				return 0, false
			}
			return protowire.DecodeZigZag(v), true
		}
		fl := protowire.ConsumeFieldValue(num, typ, h[tn:])
		if fl < 0 {
			return 0, false
		}
		h = h[tn+fl:]
	}
	return 0, false
}

// setEffectiveUser rewrites the connection-context packet (call id -3) so that its userInfo
// names only effective; ok is false for any other packet.
func setEffectiveUser(packet []byte, effective string) (nb []byte, ok bool, err error) {
	hdr, _, err := splitPacket(packet)
	if err != nil {
		return nil, false, err
	}
	if id, found := callID(hdr); !found || id != -3 {
		return nil, false, nil
	}
	nb, err = rewriteUserInfo(packet, func([]byte) []byte {
		ui := protowire.AppendTag(nil, 1, protowire.BytesType)
		return protowire.AppendString(ui, effective)
	})
	return nb, err == nil, err
}

// addRealUser rewrites the connection-context packet so that its userInfo also carries
// realUser (field 2 of UserInformationProto) beside the effective user sent.
func addRealUser(packet []byte, realUser string) ([]byte, error) {
	return rewriteUserInfo(packet, func(old []byte) []byte {
		ui := protowire.AppendTag(append([]byte(nil), old...), 2, protowire.BytesType)
		return protowire.AppendString(ui, realUser)
	})
}

// rewriteUserInfo rewrites an RPC packet [len][delimited RpcRequestHeaderProto][delimited
// IpcConnectionContextProto]: its userInfo (field 2, a UserInformationProto) becomes
// build(old), old being the one sent; every other field and the header stay as they are.
func rewriteUserInfo(packet []byte, build func(old []byte) []byte) ([]byte, error) {
	hdr, ctxMsg, err := splitPacket(packet)
	if err != nil {
		return nil, err
	}
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
			old, _ := protowire.ConsumeBytes(ctxMsg[tn:])
			out = protowire.AppendTag(out, 2, protowire.BytesType)
			out = protowire.AppendBytes(out, build(old))
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
	krb       *krbAuth
	spn       string // with krb: the NameNode's principal
	dial      dialFunc
	mu        sync.Mutex
	free      map[string][]*hdfs.Client
	maxIdle   int
	connected int64
}

func newClientPool(addr, realUser, socks string, maxIdle int) *clientPool {
	return &clientPool{addr: addr, realUser: realUser, dial: newDialer(socks), free: map[string][]*hdfs.Client{}, maxIdle: maxIdle}
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
	if p.realUser != "" && p.realUser != user && p.krb == nil {
		nn = proxyUserDial(p.dial, p.realUser)
	}
	opts := hdfs.ClientOptions{
		Addresses: []string{p.addr}, User: user,
		NamenodeDialFunc: nn, DatanodeDialFunc: p.dial,
	}
	if p.krb != nil {
		p.krb.options(&opts, p.spn)
		opts.NamenodeDialFunc = kerberosProxyDial(p.dial, user)
	}
	c, err := hdfs.NewClient(opts)
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

// krbAuth is the mirror's Kerberos login (namenode-ext's keytab), shared by its clients.
type krbAuth struct {
	cfg *KerberosConfig
	cl  *krbclient.Client
}

// loginKerberos logs in as cfg.Principal from cfg.Keytab; a failure fails Configure.
func loginKerberos(cfg *KerberosConfig) (*krbAuth, error) {
	conf, err := krbconfig.Load(cfg.Krb5Conf)
	if err != nil {
		return nil, fmt.Errorf("mirror: krb5.conf %s (newtricks.mirror.kerberos.krb5-conf): %w", cfg.Krb5Conf, err)
	}
	kt, err := keytab.Load(cfg.Keytab)
	if err != nil {
		return nil, fmt.Errorf("mirror: keytab %s: %w", cfg.Keytab, err)
	}
	name, realm, _ := strings.Cut(cfg.Principal, "@")
	if realm == "" {
		realm = conf.LibDefaults.DefaultRealm
	}
	cl := krbclient.NewWithKeytab(name, realm, kt, conf, krbclient.DisablePAFXFAST(true))
	if err := cl.Login(); err != nil {
		return nil, fmt.Errorf("mirror: kerberos login as %s@%s: %w", name, realm, err)
	}
	return &krbAuth{cfg: cfg, cl: cl}, nil
}

// options makes opts authenticate as the mirror's principal to the NameNode spn, with SASL on
// the DataNode connections.
func (k *krbAuth) options(opts *hdfs.ClientOptions, spn string) {
	opts.KerberosClient = k.cl
	spn, _, _ = strings.Cut(spn, "@") // gokrb5 asks its own realm for the service ticket
	opts.KerberosServicePrincipleName = spn
	opts.DataTransferProtection = k.cfg.DataTransferProtection
}
