package hotspot

import (
	"fmt"
	"testing"
	"time"
)

// A table full of files opened inside the window is scanned at most once per window/8, not on
// every open of yet another file; stale files still make room.
func TestReactiveFullTableScansRarely(t *testing.T) {
	cfg := Config{ReactiveClients: 8, ReactiveWindow: 8 * time.Second, ReactiveMaxTracked: 1000}
	r := newReactive(cfg)
	t0 := time.Unix(1_000_000, 0)
	for i := 0; i < cfg.ReactiveMaxTracked; i++ {
		if _, dropped := r.observe(fmt.Sprintf("/f/%d", i), "u", "10.0.0.1", t0); dropped {
			t.Fatalf("open %d dropped before the table was full", i)
		}
	}
	drops := 0
	for i := 0; i < 5000; i++ { // 5000 more files within 0.5 s: all fresh, none evictable
		at := t0.Add(time.Duration(i) * 100 * time.Microsecond)
		if _, dropped := r.observe(fmt.Sprintf("/g/%d", i), "u", "10.0.0.1", at); dropped {
			drops++
		}
	}
	if drops != 5000 {
		t.Fatalf("%d of 5000 opens dropped, want all (the table is full of fresh files)", drops)
	}
	if r.evictions != 1 {
		t.Fatalf("full table scanned %d times in 0.5 s, want 1 (at most once per %v)", r.evictions, r.evictEvery())
	}
	// After the window the old files are stale: a new one is tracked again.
	if _, dropped := r.observe("/h/1", "u", "10.0.0.1", t0.Add(cfg.ReactiveWindow+time.Second)); dropped {
		t.Fatal("open after the window dropped: stale files were not evicted")
	}
	if r.evictions != 2 || len(r.files) != 1 {
		t.Fatalf("after the window: %d scans, %d files tracked; want 2 scans, 1 file", r.evictions, len(r.files))
	}
}

// K distinct clients (ip, user) inside the window fire once; repeats and expired opens do not
// count.
func TestReactiveFiresOnKDistinctClientsInWindow(t *testing.T) {
	r := newReactive(Config{ReactiveClients: 3, ReactiveWindow: 10 * time.Second, ReactiveMaxTracked: 100})
	t0 := time.Unix(1_000_000, 0)
	steps := []struct {
		ip, user string
		after    time.Duration
		fire     bool
	}{
		{"10.0.0.1", "a", 0, false},
		{"10.0.0.1", "a", time.Second, false},      // the same client again
		{"10.0.0.1", "b", 4 * time.Second, false},  // same ip, another user: a second client
		{"10.0.0.2", "a", 12 * time.Second, false}, // the first client's opens expired
		{"10.0.0.3", "a", 13 * time.Second, true},  // 3 distinct within 10 s: 1/b, 2/a, 3/a
		{"10.0.0.4", "a", 14 * time.Second, false}, // fired: blocked until the hint ends
	}
	for i, s := range steps {
		fire, dropped := r.observe("/f", s.user, s.ip, t0.Add(s.after))
		if fire != s.fire || dropped {
			t.Fatalf("step %d (%s/%s at +%v): fire=%v dropped=%v, want fire=%v", i, s.ip, s.user, s.after, fire, dropped, s.fire)
		}
	}
}
