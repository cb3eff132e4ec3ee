package authn

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// countingAuth refuses every credential but "good", counting the verifications it does.
type countingAuth struct{ calls int }

func (a *countingAuth) Authenticate(ctx context.Context, _ string) (context.Context, error) {
	a.calls++
	md, _ := metadata.FromIncomingContext(ctx)
	if v := md.Get(MetadataKey); len(v) == 1 && v[0] == "good" {
		return ctx, nil
	}
	return nil, ErrUnauthenticated
}

func callFrom(host, cred string) context.Context {
	ctx := peer.NewContext(context.Background(), &peer.Peer{Addr: &net.TCPAddr{IP: net.ParseIP(host), Port: 4000}})
	return metadata.NewIncomingContext(ctx, metadata.Pairs(MetadataKey, cred))
}

// A bad credential sent again is refused from the cache, not verified again; a host that keeps
// failing is held off (RESOURCE_EXHAUSTED) until its bucket refills, while another host and
// good credentials are not affected.
func TestFailGuard(t *testing.T) {
	next := &countingAuth{}
	g := NewFailGuard(next, 1, 3, time.Minute)
	now := time.Unix(1000, 0)
	g.now = func() time.Time { return now }
	for i := 0; i < 2; i++ {
		if _, err := g.Authenticate(callFrom("10.0.0.1", "bad"), "/m"); !errors.Is(err, ErrUnauthenticated) {
			t.Fatalf("bad credential: %v", err)
		}
	}
	if next.calls != 1 {
		t.Fatalf("the same bad credential verified %d times", next.calls)
	}
	if _, err := g.Authenticate(callFrom("10.0.0.1", "bad2"), "/m"); !errors.Is(err, ErrUnauthenticated) {
		t.Fatal(err)
	}
	// Three failures: the burst is spent; further calls from that host are refused unverified.
	if _, err := g.Authenticate(callFrom("10.0.0.1", "good"), "/m"); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("host over its failures: %v", err)
	}
	if next.calls != 2 {
		t.Fatalf("%d verifications", next.calls)
	}
	if _, err := g.Authenticate(callFrom("10.0.0.2", "good"), "/m"); err != nil {
		t.Fatalf("another host: %v", err)
	}
	now = now.Add(2 * time.Second) // refilled to 2
	if _, err := g.Authenticate(callFrom("10.0.0.1", "good"), "/m"); err != nil {
		t.Fatalf("after refill: %v", err)
	}
	// A good credential never enters the cache; an expired entry is verified again.
	now = now.Add(2 * time.Minute)
	if _, err := g.Authenticate(callFrom("10.0.0.1", "bad"), "/m"); !errors.Is(err, ErrUnauthenticated) || next.calls != 5 {
		t.Fatalf("after the ttl: %v, %d verifications", err, next.calls)
	}
}

// Errors that are not refusals (the daemon could not be asked) are neither cached nor counted.
func TestFailGuardIgnoresUnavailable(t *testing.T) {
	n := 0
	next := authFunc(func(ctx context.Context) (context.Context, error) {
		n++
		return nil, status.Error(codes.Unavailable, "host down")
	})
	g := NewFailGuard(next, 1, 1, time.Minute)
	for i := 0; i < 5; i++ {
		if _, err := g.Authenticate(callFrom("10.0.0.1", "x"), "/m"); status.Code(err) != codes.Unavailable {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if n != 5 {
		t.Fatalf("%d verifications", n)
	}
}

type authFunc func(ctx context.Context) (context.Context, error)

func (f authFunc) Authenticate(ctx context.Context, _ string) (context.Context, error) { return f(ctx) }

func TestFailGuardConfig(t *testing.T) {
	get := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	c := ConfigFrom(get(nil), "p")
	if c.AuthFailRate != DefaultAuthFailRate || c.AuthFailBurst != DefaultAuthFailBurst || c.AuthFailCache != DefaultAuthFailCache {
		t.Fatalf("defaults %+v", c)
	}
	c = ConfigFrom(get(map[string]string{"p" + KeyAuthFailCache: "soon"}), "p")
	if err := c.Validate(); !errors.Is(err, ErrBadConfig) {
		t.Fatalf("bad duration: %v", err)
	}
	c = ConfigFrom(get(map[string]string{"p" + KeyAuthFailCache: "1500"}), "p")
	if c.AuthFailCache != 1500*time.Millisecond {
		t.Fatalf("ms: %v", c.AuthFailCache)
	}
}

// gatedAuth refuses everything but "good", after waiting for its gate: verifications that are
// in flight at once.
type gatedAuth struct {
	gate    chan struct{}
	mu      sync.Mutex
	calls   int
	started chan struct{}
}

func (a *gatedAuth) Authenticate(ctx context.Context, _ string) (context.Context, error) {
	a.mu.Lock()
	a.calls++
	a.mu.Unlock()
	a.started <- struct{}{}
	<-a.gate
	md, _ := metadata.FromIncomingContext(ctx)
	if v := md.Get(MetadataKey); len(v) == 1 && v[0] == "good" {
		return ctx, nil
	}
	return nil, ErrUnauthenticated
}

// Concurrent bad credentials from one host cannot spend more than its bucket: each takes a
// failure token before it is verified (without it, all 50 passed the check while the others
// were still being verified). A credential accepted before is neither reserved nor throttled.
func TestFailGuardConcurrent(t *testing.T) {
	next := &gatedAuth{gate: make(chan struct{}), started: make(chan struct{}, 100)}
	g := NewFailGuard(next, 1, 5, time.Minute)
	now := time.Unix(1000, 0)
	g.now = func() time.Time { return now }
	close(next.gate)
	if _, err := g.Authenticate(callFrom("10.0.0.1", "good"), "/m"); err != nil {
		t.Fatal(err)
	}
	<-next.started
	next.gate = make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	codesSeen := map[codes.Code]int{}
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := g.Authenticate(callFrom("10.0.0.1", fmt.Sprintf("forged-%d", i)), "/m")
			c := status.Code(err)
			if errors.Is(err, ErrUnauthenticated) {
				c = codes.Unauthenticated
			}
			mu.Lock()
			codesSeen[c]++
			mu.Unlock()
		}()
	}
	for range 5 {
		<-next.started // five verifications in flight: the burst
	}
	// The known-good credential goes through while the host's bucket is spent.
	done := make(chan error, 1)
	go func() {
		_, err := g.Authenticate(callFrom("10.0.0.1", "good"), "/m")
		done <- err
	}()
	<-next.started
	time.Sleep(50 * time.Millisecond)
	close(next.gate)
	wg.Wait()
	if err := <-done; err != nil {
		t.Errorf("a credential accepted before, while its host is throttled: %v", err)
	}
	if next.calls != 1+5+1 || codesSeen[codes.Unauthenticated] != 5 || codesSeen[codes.ResourceExhausted] != 45 {
		t.Errorf("%d verifications, codes %v; want 1+5+1, 5 refused, 45 throttled", next.calls, codesSeen)
	}
}
