package apiclient

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// Modes of a test server: acting, answering as namenode-ext beside a standby NameNode, or
// failing every call as a connection broken in flight would.
const (
	active int32 = iota
	standby
	broken
	nnStandby
)

// nnext is a real gRPC server with the Hints and Mirror services, in one of the modes; it
// counts the calls that reached it.
type nnext struct {
	pb.UnimplementedHintsServer
	name  string
	mode  atomic.Int32
	calls atomic.Int32
	addr  string
}

func (s *nnext) refuse() error {
	s.calls.Add(1)
	switch s.mode.Load() {
	case standby:
		return status.Error(codes.Unavailable, "standby: the NameNode beside this namenode-ext is standby, not active; call the active NameNode's namenode-ext")
	case broken:
		return status.Error(codes.Unavailable, "error reading from server: EOF")
	case nnStandby:
		return status.Error(codes.FailedPrecondition, "locate /f: rpc error: code = FailedPrecondition desc = StandbyException: Operation category READ is not supported in state standby")
	}
	return nil
}

func (s *nnext) Create(_ context.Context, r *pb.CreateHintRequest) (*pb.HintPlan, error) {
	if err := s.refuse(); err != nil {
		return nil, err
	}
	if r.GetUser() == "nobody" {
		return nil, status.Error(codes.PermissionDenied, "nobody may not")
	}
	return &pb.HintPlan{HintId: s.name}, nil
}

func (s *nnext) Status(_ context.Context, r *pb.HintStatusRequest) (*pb.HintStatus, error) {
	if err := s.refuse(); err != nil {
		return nil, err
	}
	return &pb.HintStatus{HintId: s.name, User: r.GetUser()}, nil
}

// mirror is s's Mirror service.
type mirror struct {
	pb.UnimplementedMirrorServer
	s *nnext
}

func (m mirror) Wait(r *pb.MirrorWaitRequest, st grpc.ServerStreamingServer[pb.CheckpointStatus]) error {
	if err := m.s.refuse(); err != nil {
		return err
	}
	for i := range 3 {
		if err := st.Send(&pb.CheckpointStatus{Owner: m.s.name, Ref: r.GetRef(), FilesDone: int64(i)}); err != nil {
			return err
		}
	}
	return nil
}

func serve(t *testing.T, name string, mode int32) *nnext {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &nnext{name: name, addr: lis.Addr().String()}
	s.mode.Store(mode)
	g := grpc.NewServer()
	pb.RegisterHintsServer(g, s)
	pb.RegisterMirrorServer(g, mirror{s: s})
	go g.Serve(lis)
	t.Cleanup(g.Stop)
	return s
}

// refusedAddr is a loopback address nothing listens on.
func refusedAddr(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := lis.Addr().String()
	lis.Close()
	return a
}

// sleeps records the backoff instead of waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func dialTest(t *testing.T, addrs ...string) (*Failover, *sleeps) {
	t.Helper()
	f, err := DialEach(addrs, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	sl := &sleeps{}
	f.sleep = sl.sleep
	return f, sl
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// A call answered "standby" goes to the next address; the address that worked is kept, and
// a failover back happens when the roles swap.
func TestFailoverFollowsTheActive(t *testing.T) {
	a, b := serve(t, "a", standby), serve(t, "b", active)
	f, sl := dialTest(t, a.addr, b.addr)
	h := pb.NewHintsClient(f)
	for i := range 3 {
		st, err := h.Status(ctx(t), &pb.HintStatusRequest{HintId: "x", User: "alice"})
		if err != nil || st.GetHintId() != "b" {
			t.Fatalf("call %d: %v %v, want b's answer", i, st, err)
		}
	}
	if a.calls.Load() != 1 || b.calls.Load() != 3 || f.Current() != b.addr {
		t.Fatalf("standby called %d times, active %d, current %s: the active should be remembered", a.calls.Load(), b.calls.Load(), f.Current())
	}
	if len(sl.d) != 0 {
		t.Fatalf("the first pass over the addresses slept %v", sl.d)
	}
	// A failover: b is standby now, a active. Create (not idempotent) is retried on a
	// standby answer, which did nothing.
	b.mode.Store(standby)
	a.mode.Store(active)
	p, err := h.Create(ctx(t), &pb.CreateHintRequest{User: "alice"})
	if err != nil || p.GetHintId() != "a" || f.Current() != a.addr {
		t.Fatalf("after the swap: %v %v current %s", p, err, f.Current())
	}
	// Errors that are the call's own are not retried.
	before := a.calls.Load() + b.calls.Load()
	_, err = h.Create(ctx(t), &pb.CreateHintRequest{User: "nobody"})
	if status.Code(err) != codes.PermissionDenied || a.calls.Load()+b.calls.Load() != before+1 {
		t.Fatalf("PERMISSION_DENIED: %v after %d calls, want one call", err, a.calls.Load()+b.calls.Load()-before)
	}
}

// An address that refuses connections is skipped for any call: nothing was sent.
func TestFailoverPastAnUnreachableAddress(t *testing.T) {
	b := serve(t, "b", active)
	f, _ := dialTest(t, refusedAddr(t), b.addr)
	p, err := pb.NewHintsClient(f).Create(ctx(t), &pb.CreateHintRequest{User: "alice"})
	if err != nil || p.GetHintId() != "b" {
		t.Fatalf("create past a refused address: %v %v", p, err)
	}
}

// A connection broken in flight fails over only calls that may be applied twice.
func TestFailoverInFlightOnlyIdempotent(t *testing.T) {
	a, b := serve(t, "a", broken), serve(t, "b", active)
	f, _ := dialTest(t, a.addr, b.addr)
	h := pb.NewHintsClient(f)
	if _, err := h.Create(ctx(t), &pb.CreateHintRequest{User: "alice"}); status.Code(err) != codes.Unavailable || b.calls.Load() != 0 {
		t.Fatalf("Create after a break in flight: %v, %d calls to b: want the error, no retry", err, b.calls.Load())
	}
	if st, err := h.Status(ctx(t), &pb.HintStatusRequest{HintId: "x"}); err != nil || st.GetHintId() != "b" {
		t.Fatalf("Status after a break in flight: %v %v, want b's answer", st, err)
	}
	// The NameNode's own StandbyException (namenode-ext not told yet): the same rule.
	a.mode.Store(nnStandby)
	b.calls.Store(0)
	f.worked(0)
	if _, err := h.Create(ctx(t), &pb.CreateHintRequest{User: "alice"}); status.Code(err) != codes.FailedPrecondition || b.calls.Load() != 0 {
		t.Fatalf("Create after the NameNode's StandbyException: %v, %d calls to b", err, b.calls.Load())
	}
	f.worked(0)
	if st, err := h.Status(ctx(t), &pb.HintStatusRequest{HintId: "x"}); err != nil || st.GetHintId() != "b" {
		t.Fatalf("Status after the NameNode's StandbyException: %v %v, want b's answer", st, err)
	}
	if !Idempotent(pb.Hints_Done_FullMethodName) || Idempotent(pb.Hints_Extend_FullMethodName) || Idempotent("/x/Y") {
		t.Fatal("idempotency table")
	}
}

// With no active the call gives up after MaxAttempts, backing off exponentially to the cap
// after the first pass, and returns the last refusal.
func TestFailoverBounded(t *testing.T) {
	a, b := serve(t, "a", standby), serve(t, "b", standby)
	f, sl := dialTest(t, a.addr, b.addr)
	f.WithPolicy(Policy{MaxAttempts: 7, Base: 100 * time.Millisecond, Max: 300 * time.Millisecond})
	_, err := pb.NewHintsClient(f).Status(ctx(t), &pb.HintStatusRequest{})
	if !Standby(err) || a.calls.Load()+b.calls.Load() != 7 {
		t.Fatalf("%v after %d calls, want a standby answer after 7", err, a.calls.Load()+b.calls.Load())
	}
	// Attempts 2..6 sleep 100, 200, 300, 300, 300 ms +-50%.
	want := []time.Duration{100, 200, 300, 300, 300}
	if len(sl.d) != len(want) {
		t.Fatalf("slept %v", sl.d)
	}
	for i, d := range sl.d {
		w := want[i] * time.Millisecond
		if d < w/2 || d > w+w/2 {
			t.Fatalf("sleep %d = %v, want %v +-50%% (all %v)", i, d, w, sl.d)
		}
	}
	if !strings.HasSuffix(status.Convert(err).Message(), "(after 7 attempts over "+a.addr+","+b.addr+")") {
		t.Fatalf("the error does not say what was tried: %v", err)
	}
	// Nothing listening anywhere: down, not failing over; given up after DownPasses passes.
	down, dsl := dialTest(t, refusedAddr(t), refusedAddr(t))
	_, err = pb.NewHintsClient(down).Status(ctx(t), &pb.HintStatusRequest{})
	if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "(after 6 attempts") || len(dsl.d) != 4 {
		t.Fatalf("no server anywhere: %v after %d sleeps, want UNAVAILABLE after 6 attempts", err, len(dsl.d))
	}
	// The caller's context ends the retries.
	c, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := pb.NewHintsClient(f).Status(c, &pb.HintStatusRequest{}); status.Code(err) != codes.Canceled && !Standby(err) {
		t.Fatalf("cancelled: %v", err)
	}
	// One address: no retry, as before failover.
	one, _ := dialTest(t, a.addr)
	n := a.calls.Load()
	if _, err := pb.NewHintsClient(one).Status(ctx(t), &pb.HintStatusRequest{}); !Standby(err) || a.calls.Load() != n+1 {
		t.Fatalf("one address: %v after %d calls", err, a.calls.Load()-n)
	}
}

// A server-streaming call fails over at stream start and then reads the whole stream.
func TestFailoverStreamStart(t *testing.T) {
	a, b := serve(t, "a", standby), serve(t, "b", active)
	f, _ := dialTest(t, refusedAddr(t), a.addr, b.addr)
	st, err := pb.NewMirrorClient(f).Wait(ctx(t), &pb.MirrorWaitRequest{User: "alice", Ref: &pb.CheckpointRef{Job: "j", Step: 7}})
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for {
		m, err := st.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("recv: %v", err)
		}
		if m.GetOwner() != "b" || m.GetRef().GetStep() != 7 {
			t.Fatalf("message %v: want b's, for the request sent (step 7)", m)
		}
		got = append(got, m.GetFilesDone())
	}
	if len(got) != 3 || f.Current() != b.addr {
		t.Fatalf("received %v, current %s", got, f.Current())
	}
	// No active: the stream's error is the refusal.
	b.mode.Store(standby)
	f.WithPolicy(Policy{MaxAttempts: 4})
	st, err = pb.NewMirrorClient(f).Wait(ctx(t), &pb.MirrorWaitRequest{Ref: &pb.CheckpointRef{Job: "j"}})
	if err == nil {
		_, err = st.Recv()
	}
	if !Standby(err) && !errors.Is(err, context.Canceled) {
		t.Fatalf("stream with no active: %v", err)
	}
}

func TestSplitAddrs(t *testing.T) {
	got, err := SplitAddrs(" a:1, b:2,,a:1 ")
	if err != nil || strings.Join(got, " ") != "a:1 b:2" {
		t.Fatalf("%v %v", got, err)
	}
	for _, bad := range []string{"", ",", "a", "a:0", "a:1,b", ":1"} {
		if _, err := SplitAddrs(bad); !errors.Is(err, ErrBadAddress) {
			t.Errorf("SplitAddrs(%q) = %v, want ErrBadAddress", bad, err)
		}
	}
	if _, err := SplitAddrs(manyAddrs(MaxAddrs + 1)); !errors.Is(err, ErrBadAddress) {
		t.Error("too many addresses accepted")
	}
	if _, err := DialEach(nil, nil); !errors.Is(err, ErrBadAddress) {
		t.Error("no address dialed")
	}
	if _, err := Dial("a:1,nope"); !errors.Is(err, ErrBadAddress) {
		t.Error("a bad list dialed")
	}
	c, err := Dial("127.0.0.1:1,127.0.0.1:2")
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := c.ClientConnInterface.(*Failover); !ok || len(f.Addrs()) != 2 {
		t.Fatalf("Dial of a list: %T", c.ClientConnInterface)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}

func manyAddrs(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("h:")
		b.WriteString(string(rune('0' + 1 + i%9)))
		b.WriteString(strings.Repeat("0", i/9))
	}
	return b.String()
}
