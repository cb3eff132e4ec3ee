package authn

import (
	"context"
	"errors"
	"net"
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
