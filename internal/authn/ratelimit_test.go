package authn

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestRateLimiter(t *testing.T) {
	now := time.Unix(1000, 0)
	r := NewRateLimiter(10, 3)
	r.now = func() time.Time { return now }
	for i := range 3 {
		if !r.Allow("alice") {
			t.Fatalf("burst call %d refused", i)
		}
	}
	if r.Allow("alice") {
		t.Fatal("4th call within the burst allowed")
	}
	if !r.Allow("bob") {
		t.Fatal("bob limited by alice's calls")
	}
	now = now.Add(100 * time.Millisecond) // one token back at 10/s
	if !r.Allow("alice") || r.Allow("alice") {
		t.Fatal("refill is not 10/s")
	}
	now = now.Add(time.Hour) // never more than the burst
	for i := range 3 {
		if !r.Allow("alice") {
			t.Fatalf("call %d after a long pause refused", i)
		}
	}
	if r.Allow("alice") {
		t.Fatal("tokens accumulated beyond the burst")
	}
}

func TestRateKeyAndCheck(t *testing.T) {
	r := NewRateLimiter(1, 1)
	alice := NewContext(context.Background(), Identity{User: "alice", Method: MethodKerberos}, "10.0.0.1:5", nil)
	aliceElsewhere := NewContext(context.Background(), Identity{User: "alice", Method: MethodToken}, "10.0.0.2:6", nil)
	simple := NewContext(context.Background(), Identity{Method: MethodSimple}, "10.0.0.1:7", nil)
	if err := r.check(alice); err != nil {
		t.Fatal(err)
	}
	// Counted per proven user, wherever she calls from.
	if err := r.check(aliceElsewhere); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("alice from another host: %v", err)
	}
	// Under simple authentication there is no proven user to count against.
	for range 3 {
		if err := r.check(simple); err != nil {
			t.Fatalf("simple caller: %v", err)
		}
	}
	if rateKey(simple) != "" || rateKey(alice) != "user:alice" {
		t.Fatalf("keys %q %q", rateKey(simple), rateKey(alice))
	}
}
