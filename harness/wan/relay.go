package wan

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Link is the emulated WAN.
type Link struct {
	// Delay is the one-way delay (half the round-trip time).
	Delay time.Duration
	// Rate caps the bytes per second crossing the link in each direction, shared by all
	// connections; 0 means no cap.
	Rate int64
	// PerConnRate caps each connection's bytes per second in each direction; 0 means no cap.
	PerConnRate int64
}

// Stats are a Relay's counters.
type Stats struct {
	// Remote connections accepted and bytes carried across the link, per direction
	// (Forward: from the SOCKS client to the remote destination).
	Conns, Forward, Backward int64
	// Local connections and bytes passed through without emulation.
	LocalConns, LocalBytes int64
}

// Relay is a SOCKS5 proxy (no authentication, CONNECT only) that emulates Link for remote
// destinations.
type Relay struct {
	ln     net.Listener
	link   Link
	remote func(addr string) bool
	fwd    *pacer
	back   *pacer

	conns, fwdBytes, backBytes, localConns, localBytes atomic.Int64

	mu           sync.Mutex
	open         map[net.Conn]struct{}
	fwdListeners []net.Listener
	closed       bool
	wg           sync.WaitGroup
}

// ErrClosed is returned by dials through a closed Relay.
var ErrClosed = errors.New("wan relay closed")

// Listen starts a Relay on addr ("127.0.0.1:0" for a free port). remote reports whether a
// destination "host:port" is across the link; nil means every destination is.
func Listen(addr string, link Link, remote func(addr string) bool) (*Relay, error) {
	if link.Delay < 0 || link.Rate < 0 || link.PerConnRate < 0 {
		return nil, fmt.Errorf("wan: negative delay or rate in %+v", link)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("wan: listen %s: %w", addr, err)
	}
	if remote == nil {
		remote = func(string) bool { return true }
	}
	r := &Relay{ln: ln, link: link, remote: remote, fwd: newPacer(link.Rate), back: newPacer(link.Rate),
		open: map[net.Conn]struct{}{}}
	r.wg.Add(1)
	go r.serve()
	return r, nil
}

// Addr is the relay's "host:port".
func (r *Relay) Addr() string { return r.ln.Addr().String() }

// Link returns the emulated link.
func (r *Relay) Link() Link { return r.link }

// Stats returns the counters so far.
func (r *Relay) Stats() Stats {
	return Stats{Conns: r.conns.Load(), Forward: r.fwdBytes.Load(), Backward: r.backBytes.Load(),
		LocalConns: r.localConns.Load(), LocalBytes: r.localBytes.Load()}
}

// Close stops accepting, cuts every open connection and waits for the relay's goroutines.
func (r *Relay) Close() error {
	r.mu.Lock()
	r.closed = true
	for c := range r.open {
		c.Close()
	}
	for _, ln := range r.fwdListeners {
		ln.Close()
	}
	r.mu.Unlock()
	err := r.ln.Close()
	r.wg.Wait()
	return err
}

func (r *Relay) track(c net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		c.Close()
		return false
	}
	r.open[c] = struct{}{}
	return true
}

func (r *Relay) untrack(c net.Conn) {
	r.mu.Lock()
	delete(r.open, c)
	r.mu.Unlock()
	c.Close()
}

func (r *Relay) serve() {
	defer r.wg.Done()
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return
		}
		if !r.track(c) {
			return
		}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			defer r.untrack(c)
			r.handle(c)
		}()
	}
}

// handle runs one SOCKS5 session (RFC 1928): greeting, CONNECT, then the relay.
func (r *Relay) handle(c net.Conn) {
	c.SetDeadline(time.Now().Add(10 * time.Second))
	dst, err := readConnect(c)
	if err != nil {
		return
	}
	remote := r.remote(dst)
	if remote && r.link.Delay > 0 {
		// The TCP handshake to the far side costs a round trip.
		time.Sleep(2 * r.link.Delay)
	}
	up, err := net.DialTimeout("tcp", dst, 10*time.Second)
	if err != nil {
		c.Write([]byte{5, 5, 0, 1, 0, 0, 0, 0, 0, 0}) // connection refused
		return
	}
	if !r.track(up) {
		return
	}
	defer r.untrack(up)
	// Success, bound address 0.0.0.0:0 (clients ignore it).
	if _, err := c.Write([]byte{5, 0, 0, 1, 0, 0, 0, 0, 0, 0}); err != nil {
		return
	}
	c.SetDeadline(time.Time{})
	if !remote {
		r.localConns.Add(1)
		var wg sync.WaitGroup
		wg.Add(2)
		cp := func(dst, src net.Conn) {
			defer wg.Done()
			n, _ := io.Copy(dst, src)
			r.localBytes.Add(n)
			closeWrite(dst)
		}
		go cp(up, c)
		go cp(c, up)
		wg.Wait()
		return
	}
	r.carry(c, up)
}

// carry relays an established pair across the link: client c, far side up.
func (r *Relay) carry(c, up net.Conn) {
	r.conns.Add(1)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); r.pump(up, c, r.fwd, &r.fwdBytes) }()
	go func() { defer wg.Done(); r.pump(c, up, r.back, &r.backBytes) }()
	wg.Wait()
}

// Forward listens on listen and carries every connection to target across the link, for
// clients that cannot use SOCKS (Hadoop's Java block reader needs channel-backed sockets, which
// SocksSocketFactory does not make): the client is pointed at listen instead of target (for
// DataNodes, through a host name the client resolves to listen's address, e.g. with
// -Djdk.net.hosts.file). It returns the address listened on; Close stops it.
func (r *Relay) Forward(listen, target string) (string, error) {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return "", fmt.Errorf("wan: forward %s: %w", listen, err)
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		ln.Close()
		return "", ErrClosed
	}
	r.fwdListeners = append(r.fwdListeners, ln)
	r.mu.Unlock()
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if !r.track(c) {
				return
			}
			r.wg.Add(1)
			go func() {
				defer r.wg.Done()
				defer r.untrack(c)
				if r.link.Delay > 0 {
					time.Sleep(2 * r.link.Delay)
				}
				up, err := net.DialTimeout("tcp", target, 10*time.Second)
				if err != nil {
					return
				}
				if !r.track(up) {
					return
				}
				defer r.untrack(up)
				r.carry(c, up)
			}()
		}
	}()
	return ln.Addr().String(), nil
}

func closeWrite(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.CloseWrite()
	} else {
		c.Close()
	}
}

// chunk is data in flight on the link.
type chunk struct {
	data   []byte
	arrive time.Time
}

// pump carries src -> dst across the link: each read is paced by the shared and the
// per-connection rate (serialisation), then delivered Delay later (propagation). The queue
// between the two bounds what one connection holds in flight.
func (r *Relay) pump(dst, src net.Conn, shared *pacer, counter *atomic.Int64) {
	const chunkSize = 32 << 10
	q := make(chan chunk, 64)
	own := newPacer(r.link.PerConnRate)
	go func() {
		defer close(q)
		for {
			buf := make([]byte, chunkSize)
			n, err := src.Read(buf)
			if n > 0 {
				depart := shared.reserve(n)
				if d := own.reserve(n); d.After(depart) {
					depart = d
				}
				sleepUntil(depart)
				q <- chunk{data: buf[:n], arrive: depart.Add(r.link.Delay)}
			}
			if err != nil {
				return
			}
		}
	}()
	failed := false
	for ch := range q {
		if failed {
			continue // drain so the reader can finish
		}
		sleepUntil(ch.arrive)
		if _, err := dst.Write(ch.data); err != nil {
			failed = true
			src.Close()
			continue
		}
		counter.Add(int64(len(ch.data)))
	}
	if !failed {
		closeWrite(dst)
	}
}

func sleepUntil(t time.Time) {
	if d := time.Until(t); d > 0 {
		time.Sleep(d)
	}
}

// pacer hands out link time first come, first served: reserve(n) returns when the last of n
// bytes has left.
type pacer struct {
	mu   sync.Mutex
	rate float64
	next time.Time
}

func newPacer(rate int64) *pacer { return &pacer{rate: float64(rate)} }

func (p *pacer) reserve(n int) time.Time {
	now := time.Now()
	if p.rate <= 0 {
		return now
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	start := p.next
	if start.Before(now) {
		start = now
	}
	p.next = start.Add(time.Duration(float64(n) / p.rate * float64(time.Second)))
	return p.next
}

// readConnect reads a SOCKS5 greeting and CONNECT request and returns the destination.
func readConnect(c net.Conn) (string, error) {
	var hdr [2]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return "", err
	}
	if hdr[0] != 5 {
		return "", fmt.Errorf("socks version %d", hdr[0])
	}
	methods := make([]byte, hdr[1])
	if _, err := io.ReadFull(c, methods); err != nil {
		return "", err
	}
	ok := false
	for _, m := range methods {
		ok = ok || m == 0
	}
	if !ok {
		c.Write([]byte{5, 0xff})
		return "", errors.New("socks client offers no 'no authentication' method")
	}
	if _, err := c.Write([]byte{5, 0}); err != nil {
		return "", err
	}
	var req [4]byte
	if _, err := io.ReadFull(c, req[:]); err != nil {
		return "", err
	}
	if req[0] != 5 || req[1] != 1 {
		c.Write([]byte{5, 7, 0, 1, 0, 0, 0, 0, 0, 0}) // command not supported
		return "", fmt.Errorf("socks command %d not supported", req[1])
	}
	var host string
	switch req[3] {
	case 1:
		var a [4]byte
		if _, err := io.ReadFull(c, a[:]); err != nil {
			return "", err
		}
		host = net.IP(a[:]).String()
	case 4:
		var a [16]byte
		if _, err := io.ReadFull(c, a[:]); err != nil {
			return "", err
		}
		host = net.IP(a[:]).String()
	case 3:
		var l [1]byte
		if _, err := io.ReadFull(c, l[:]); err != nil {
			return "", err
		}
		name := make([]byte, l[0])
		if _, err := io.ReadFull(c, name); err != nil {
			return "", err
		}
		host = string(name)
	default:
		c.Write([]byte{5, 8, 0, 1, 0, 0, 0, 0, 0, 0})
		return "", fmt.Errorf("socks address type %d", req[3])
	}
	var port [2]byte
	if _, err := io.ReadFull(c, port[:]); err != nil {
		return "", err
	}
	return net.JoinHostPort(host, strconv.Itoa(int(binary.BigEndian.Uint16(port[:])))), nil
}

// Dialer returns a dial function that connects through the SOCKS5 proxy at proxyAddr, for
// colinmarc/hdfs (ClientOptions.NamenodeDialFunc, DatanodeDialFunc) and any Go client.
func Dialer(proxyAddr string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, "tcp", proxyAddr)
		if err != nil {
			return nil, fmt.Errorf("socks proxy %s: %w", proxyAddr, err)
		}
		if dl, ok := ctx.Deadline(); ok {
			c.SetDeadline(dl)
		}
		if err := socksConnect(c, addr); err != nil {
			c.Close()
			return nil, fmt.Errorf("socks connect %s via %s: %w", addr, proxyAddr, err)
		}
		c.SetDeadline(time.Time{})
		return c, nil
	}
}

func socksConnect(c net.Conn, addr string) error {
	host, portS, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	port, err := strconv.Atoi(portS)
	if err != nil || port < 0 || port > 65535 {
		return fmt.Errorf("bad port in %q", addr)
	}
	if _, err := c.Write([]byte{5, 1, 0}); err != nil {
		return err
	}
	var rep [2]byte
	if _, err := io.ReadFull(c, rep[:]); err != nil {
		return err
	}
	if rep[0] != 5 || rep[1] != 0 {
		return fmt.Errorf("proxy refused the greeting (%d, %d)", rep[0], rep[1])
	}
	req := []byte{5, 1, 0}
	if ip := net.ParseIP(host); ip != nil && ip.To4() != nil {
		req = append(append(req, 1), ip.To4()...)
	} else if ip != nil {
		req = append(append(req, 4), ip.To16()...)
	} else {
		if len(host) > 255 {
			return fmt.Errorf("host name too long: %q", host)
		}
		req = append(append(req, 3, byte(len(host))), host...)
	}
	req = binary.BigEndian.AppendUint16(req, uint16(port))
	if _, err := c.Write(req); err != nil {
		return err
	}
	var resp [4]byte
	if _, err := io.ReadFull(c, resp[:]); err != nil {
		return err
	}
	if resp[1] != 0 {
		return fmt.Errorf("proxy reply %d", resp[1])
	}
	skip := 0
	switch resp[3] {
	case 1:
		skip = 4
	case 4:
		skip = 16
	case 3:
		var l [1]byte
		if _, err := io.ReadFull(c, l[:]); err != nil {
			return err
		}
		skip = int(l[0])
	}
	_, err = io.ReadFull(c, make([]byte, skip+2))
	return err
}
