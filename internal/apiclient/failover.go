package apiclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/newtricks/newtricks/internal/nsclient"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// MaxAddrs bounds the addresses of one failover connection (a nameservice has two or three
// NameNodes; Hadoop allows up to five).
const MaxAddrs = 16

// Policy is how a failover connection retries, after Hadoop's
// RetryPolicies.failoverOnNetworkException as ConfiguredFailoverProxyProvider uses it
// (dfs.client.failover.max.attempts 15, sleep.base.millis 500, sleep.max.millis 15000): a
// call refused by one address goes to the next; the first pass over the addresses is
// immediate, each failover after it sleeps Base*2^k (at most Max, with +-50% jitter so that
// many clients do not come back in step).
type Policy struct {
	// MaxAttempts bounds the tries of one call over all addresses (>= 1).
	MaxAttempts int
	// Base and Max are the backoff between failovers after the first pass.
	Base, Max time.Duration
}

// DefaultPolicy is Hadoop's client failover defaults. The call's context bounds it too.
var DefaultPolicy = Policy{MaxAttempts: 15, Base: 500 * time.Millisecond, Max: 15 * time.Second}

// SplitAddrs parses a comma-separated list of host:port addresses (spaces around entries and
// empty entries are ignored; repeated ones kept once), as the CLI's --addr, datanode-ext's
// newtricks.datanode.ext.namenode.api and Python's namenode_ext take it.
func SplitAddrs(s string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, a := range strings.Split(s, ",") {
		a = strings.TrimSpace(a)
		if a == "" || seen[a] {
			continue
		}
		if !nsclient.ValidAddr(a) {
			return nil, fmt.Errorf("%w: address %q is not host:port", ErrBadAddress, a)
		}
		seen[a] = true
		out = append(out, a)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no address in %q", ErrBadAddress, s)
	}
	if len(out) > MaxAddrs {
		return nil, fmt.Errorf("%w: %d addresses, at most %d", ErrBadAddress, len(out), MaxAddrs)
	}
	return out, nil
}

// ErrBadAddress: an address list a caller gave is not host:port entries.
var ErrBadAddress = errors.New("bad address")

// Failover is one logical connection to a service served at several addresses of which one
// acts at a time (the namenode-ext of each NameNode of a nameservice): calls go to the
// address that answered last; a call the rules below allow to be retried moves on to the
// next address, as Hadoop's client fails over between NameNodes. It is a
// grpc.ClientConnInterface, so every generated client works over it unchanged.
//
// What is retried on another address (Retryable):
//   - an UNAVAILABLE answer "standby: ..." (namenode-ext beside a standby NameNode) or
//     "namenode-ext is starting ..." (beside a NameNode becoming active): both are refused
//     before any work is done, so any call is retried, as Hadoop retries a StandbyException;
//   - an UNAVAILABLE that says the call was never sent (gRPC failed to connect: "while
//     dialing", connection refused): nothing reached a server, so any call is retried;
//   - any other UNAVAILABLE (the connection broke while the call was in flight: a NameNode
//     killed mid-call), and a FAILED_PRECONDITION carrying the NameNode's StandbyException
//     (the NameNode turned standby before namenode-ext knew, NameNodeStandby), only for the
//     idempotent calls (Idempotent): reads (Hints.Status,
//     List; Mirror.Status, Wait; Namespace.*; DataNodeDirectory.List), and calls whose second
//     application changes nothing (Hints.Done of an ended hint answers its status; Mirror.Urgent
//     and Complete mark a checkpoint; DataNodeDirectory.Register renews an entry). Hints.Create
//     (a second hint) and Hints.Extend (the window moved twice) are not: the error is returned
//     and the caller decides (Hadoop does the same for its non-@Idempotent calls).
//
// A server-streaming call (Mirror.Wait) fails over at stream start: the request is kept
// until the first message arrives, and a refusal before it re-opens the stream on the next
// address. Once a message has arrived the stream's errors are the caller's. Client- and
// bidi-streaming calls are not failed over.
type Failover struct {
	addrs  []string
	conns  []*grpc.ClientConn
	policy Policy
	// sleep waits d or until ctx ends (a test's clock may replace it).
	sleep func(ctx context.Context, d time.Duration) error

	mu  sync.Mutex
	cur int
}

// DialEach connects to every address (none is dialed until a call needs it: grpc.NewClient),
// with the options opts returns for that address (its TLS server name, its Kerberos service
// principal), after the plaintext and Reconnect defaults. opts may be nil.
func DialEach(addrs []string, opts func(addr string) ([]grpc.DialOption, error)) (*Failover, error) {
	if len(addrs) == 0 {
		return nil, fmt.Errorf("%w: no address", ErrBadAddress)
	}
	if len(addrs) > MaxAddrs {
		return nil, fmt.Errorf("%w: %d addresses, at most %d", ErrBadAddress, len(addrs), MaxAddrs)
	}
	f := &Failover{addrs: append([]string(nil), addrs...), policy: DefaultPolicy, sleep: sleepCtx}
	for _, a := range addrs {
		if !nsclient.ValidAddr(a) {
			f.Close()
			return nil, fmt.Errorf("%w: address %q is not host:port", ErrBadAddress, a)
		}
		var o []grpc.DialOption
		if opts != nil {
			var err error
			if o, err = opts(a); err != nil {
				f.Close()
				return nil, err
			}
		}
		cc, err := grpc.NewClient(a, append(defaults(), o...)...)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("dial %s: %w", a, err)
		}
		f.conns = append(f.conns, cc)
	}
	return f, nil
}

// WithPolicy sets the retry policy (before the first call); a MaxAttempts below 1 is 1.
func (f *Failover) WithPolicy(p Policy) *Failover {
	p.MaxAttempts = max(p.MaxAttempts, 1)
	f.policy = p
	return f
}

// Addrs are the addresses, in the order given.
func (f *Failover) Addrs() []string { return append([]string(nil), f.addrs...) }

// Each is the connection to every address, in order (for calls that go to all of them, as
// datanode-ext's registration does); they stay the Failover's to close.
func (f *Failover) Each() []*grpc.ClientConn { return append([]*grpc.ClientConn(nil), f.conns...) }

// Current is the address calls go to first: the one that answered last.
func (f *Failover) Current() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.addrs[f.cur]
}

// Close closes every connection.
func (f *Failover) Close() error {
	var first error
	for _, cc := range f.conns {
		if err := cc.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

func (f *Failover) start() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cur
}

func (f *Failover) worked(k int) {
	f.mu.Lock()
	f.cur = k
	f.mu.Unlock()
}

// backoff is the wait before attempt n (0-based) of a call.
func (f *Failover) backoff(n int) time.Duration {
	k := n - len(f.conns)
	if k < 0 {
		return 0
	}
	d := f.policy.Base << min(k, 30)
	if d <= 0 || d > f.policy.Max {
		d = f.policy.Max
	}
	return d/2 + time.Duration(rand.Int64N(int64(d)+1))
}

// try runs call on one address after another from the current one while the error is one
// Retryable allows for method, the attempts last and ctx has not ended. With one address
// nothing is retried: the error is the caller's, as before failover existed.
func (f *Failover) try(ctx context.Context, method string, call func(k int) error) error {
	start := f.start()
	err := call(start)
	if err == nil {
		f.worked(start)
		return nil
	}
	return f.retry(ctx, method, start, err, call)
}

// retry goes on after attempt 0 at address start failed with err. The error it gives up with
// keeps the last answer's code and message, and says how many attempts over which addresses.
func (f *Failover) retry(ctx context.Context, method string, start int, err error, call func(k int) error) error {
	if len(f.conns) == 1 {
		return err
	}
	refused := 0 // consecutive attempts that reached no server
	n := 1
	for ; n < f.policy.MaxAttempts; n++ {
		if notSent(err) {
			refused++
		} else {
			refused = 0
		}
		if !Retryable(method, err) || ctx.Err() != nil {
			return f.gaveUp(err, n)
		}
		if refused >= DownPasses*len(f.conns) {
			// No namenode-ext accepts connections at all: the service is down (or the
			// addresses are wrong), not failing over; a takeover leaves one answering standby.
			return f.gaveUp(err, n)
		}
		if d := f.backoff(n); d > 0 {
			if f.sleep(ctx, d) != nil {
				return f.gaveUp(err, n)
			}
		}
		k := (start + n) % len(f.conns)
		if err = call(k); err == nil {
			f.worked(k)
			return nil
		}
	}
	return f.gaveUp(err, n)
}

// DownPasses is how many passes over the addresses in which none accepted a connection end a
// call's retries (about 7 s of backoff with the default policy).
const DownPasses = 3

// gaveUp is err after n attempts: the same code and message, the attempts appended (a
// standby's answer still begins with StandbyPrefix).
func (f *Failover) gaveUp(err error, n int) error {
	st, ok := status.FromError(err)
	if !ok || n < 2 {
		return err
	}
	return status.Errorf(st.Code(), "%s (after %d attempts over %s)", st.Message(), n, strings.Join(f.addrs, ","))
}

// notSent: the call reached no server (gRPC could not connect).
func notSent(err error) bool {
	st, _ := status.FromError(err)
	m := st.Message()
	return st.Code() == codes.Unavailable && (strings.Contains(m, "while dialing") || strings.Contains(m, "connection refused"))
}

// Invoke implements grpc.ClientConnInterface.
func (f *Failover) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	return f.try(ctx, method, func(k int) error { return f.conns[k].Invoke(ctx, method, args, reply, opts...) })
}

// NewStream implements grpc.ClientConnInterface: a server-streaming call fails over until its
// first message; other streams go to the current address only.
func (f *Failover) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	if desc.ClientStreams || !desc.ServerStreams {
		k := f.start()
		return f.conns[k].NewStream(ctx, desc, method, opts...)
	}
	s := &failoverStream{f: f, ctx: ctx, desc: desc, method: method, opts: opts}
	var err error
	s.k = f.start()
	s.ClientStream, err = f.conns[s.k].NewStream(ctx, desc, method, opts...)
	if err != nil {
		// NewStream fails only before anything is sent: open it where the rules allow.
		err = f.try(ctx, method, func(k int) error {
			cs, err := f.conns[k].NewStream(ctx, desc, method, opts...)
			if err == nil {
				s.ClientStream, s.k = cs, k
			}
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	return s, nil
}

// failoverStream is a server-streaming call that keeps its request until the first message
// arrives, and re-opens on the next address when the first receive is refused.
type failoverStream struct {
	grpc.ClientStream
	f      *Failover
	ctx    context.Context
	desc   *grpc.StreamDesc
	method string
	opts   []grpc.CallOption
	k      int

	sent     []any
	closed   bool
	received bool
	eof      bool
}

func (s *failoverStream) SendMsg(m any) error {
	if !s.received {
		s.sent = append(s.sent, m)
	}
	return s.ClientStream.SendMsg(m)
}

func (s *failoverStream) CloseSend() error {
	s.closed = true
	return s.ClientStream.CloseSend()
}

func (s *failoverStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	if s.received || err == nil || err == io.EOF {
		if err == nil && !s.received {
			s.received = true
			s.sent = nil
			s.f.worked(s.k)
		}
		return err
	}
	// Refused before the first message: re-open on the next addresses, as a unary call.
	rerr := s.f.retry(s.ctx, s.method, s.k, err, func(k int) error {
		cs, oerr := s.f.conns[k].NewStream(s.ctx, s.desc, s.method, s.opts...)
		if oerr != nil {
			return oerr
		}
		for _, msg := range s.sent {
			if oerr = cs.SendMsg(msg); oerr != nil && oerr != io.EOF {
				return oerr
			}
		}
		if s.closed {
			if oerr = cs.CloseSend(); oerr != nil {
				return oerr
			}
		}
		s.ClientStream, s.k = cs, k
		oerr = cs.RecvMsg(m)
		if oerr == io.EOF {
			s.eof = true
			return nil
		}
		return oerr
	})
	if rerr != nil {
		return rerr
	}
	s.received = true
	s.sent = nil
	if s.eof {
		return io.EOF
	}
	return nil
}

func (s *failoverStream) Header() (metadata.MD, error) { return s.ClientStream.Header() }
func (s *failoverStream) Trailer() metadata.MD         { return s.ClientStream.Trailer() }

// Retryable reports whether a call of method that failed with err may be sent to another
// address (see Failover).
func Retryable(method string, err error) bool {
	switch status.Code(err) {
	case codes.Unavailable:
		return refusedBeforeWork(err) || Idempotent(method)
	case codes.FailedPrecondition:
		return NameNodeStandby(err) && Idempotent(method)
	}
	return false
}

// NameNodeStandby reports whether err carries the NameNode's own StandbyException: namenode-ext
// still believed its NameNode active (it learns a transition within 200 ms) when the NameNode
// refused the call's operation. The operation that was refused did nothing, but a call made of
// several (Hints.Create) may have done its first ones, so only idempotent calls are retried.
func NameNodeStandby(err error) bool {
	st, _ := status.FromError(err)
	return st.Code() == codes.FailedPrecondition && strings.Contains(st.Message(), "StandbyException")
}

// refusedBeforeWork: the error says nothing of the call was done (a standby's or a starting
// namenode-ext's answer, or a call that never left the client).
func refusedBeforeWork(err error) bool {
	st, _ := status.FromError(err)
	if st.Code() != codes.Unavailable {
		return false
	}
	m := st.Message()
	return strings.HasPrefix(m, StandbyPrefix) || strings.HasPrefix(m, StartingPrefix) ||
		strings.Contains(m, "while dialing") || strings.Contains(m, "connection refused")
}

// StandbyPrefix and StartingPrefix begin namenode-ext's UNAVAILABLE answers while its
// NameNode is not active (namenode-ext/nnext/terms.go).
const (
	StandbyPrefix  = "standby:"
	StartingPrefix = "namenode-ext is starting"
)

// Standby reports whether err is a namenode-ext's answer beside a NameNode that is not active.
func Standby(err error) bool {
	st, _ := status.FromError(err)
	return st.Code() == codes.Unavailable && (strings.HasPrefix(st.Message(), StandbyPrefix) || strings.HasPrefix(st.Message(), StartingPrefix))
}

// idempotent are the public calls that may be sent again after a connection broke in flight.
var idempotent = map[string]bool{
	pb.Hints_Status_FullMethodName: true, pb.Hints_List_FullMethodName: true, pb.Hints_Done_FullMethodName: true,
	pb.Mirror_Status_FullMethodName: true, pb.Mirror_Wait_FullMethodName: true,
	pb.Mirror_Urgent_FullMethodName: true, pb.Mirror_Complete_FullMethodName: true,
	pb.Namespace_Locate_FullMethodName: true, pb.Namespace_LocateBatch_FullMethodName: true,
	pb.Namespace_RecentEvents_FullMethodName: true,
	pb.DataNodeDirectory_List_FullMethodName: true, pb.DataNodeDirectory_Register_FullMethodName: true,
}

// Idempotent reports whether method (a full gRPC method name) may be applied twice.
func Idempotent(method string) bool { return idempotent[method] }

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
