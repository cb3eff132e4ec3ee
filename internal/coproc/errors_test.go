package coproc

import (
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestStatusCodesRoundTrip(t *testing.T) {
	errA := errors.New("a")
	errB := errors.New("b")
	tab := StatusCodes{{Err: errA, Code: codes.NotFound}, {Err: errB, Code: codes.NotFound}}

	st := tab.ToStatus(fmt.Errorf("file x: %w", errB))
	if status.Code(st) != codes.NotFound {
		t.Fatalf("code %v, want NotFound", status.Code(st))
	}
	back := tab.FromStatus(st)
	if !errors.Is(back, errA) || !errors.Is(back, errB) {
		t.Fatalf("%v should match both sentinels of its code", back)
	}
	if errors.Is(back, ErrPermission) {
		t.Fatalf("%v matches a sentinel of another table", back)
	}
	if back.Error() != "file x: b" {
		t.Fatalf("message %q", back.Error())
	}
	// A host status wrapped with %w keeps its code; an unknown error is Internal.
	host := fmt.Errorf("call: %w", status.Error(codes.ResourceExhausted, "busy"))
	if c := status.Code(tab.ToStatus(host)); c != codes.ResourceExhausted {
		t.Fatalf("wrapped host status became %v", c)
	}
	if c := status.Code(tab.ToStatus(errors.New("boom"))); c != codes.Internal {
		t.Fatalf("unknown error became %v", c)
	}
	if tab.ToStatus(nil) != nil || tab.FromStatus(nil) != nil {
		t.Fatal("nil must stay nil")
	}
}
