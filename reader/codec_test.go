package reader

import "testing"

// TestPoolClasses: every size gets a buffer at least as large and at most 1/8
// larger (above 4 KiB), and a buffer comes back to the class it was made for.
func TestPoolClasses(t *testing.T) {
	var p bufPool
	for _, n := range []int{0, 1, 100, 4095, 4096, 4097, 153_624, 301_080, 1 << 20, 1<<20 + 1, 64 << 20, 64<<20 + 1} {
		b := p.get(n)
		if len(*b) < n || (n > 4096 && len(*b) > n+n/8) {
			t.Errorf("get(%d) = %d bytes", n, len(*b))
		}
		c, _, ok := poolClass(n)
		p.put(b)
		if ok {
			if c2, size, _ := poolClass(cap(*b)); c2 != c || size != cap(*b) {
				t.Errorf("buffer of %d bytes for %d: class %d, returned to %d", cap(*b), n, c, c2)
			}
		}
	}
}
