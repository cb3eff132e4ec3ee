package cluster

import "testing"

// Two calls never return the same port, although the first call's listeners are closed
// before the second one runs (the kernel would happily hand a released port out again).
func TestFreePortsNeverRepeats(t *testing.T) {
	seen := map[int]bool{}
	for range 50 {
		ps, err := FreePorts(8)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			if seen[p] {
				t.Fatalf("port %d handed out twice", p)
			}
			seen[p] = true
		}
	}
}
