package replica

import (
	"fmt"
	"testing"
)

// BenchmarkRead measures what verifying a range against the checksum file costs: the same
// reads of a 64 MiB replica (from the page cache: the disk is not what is measured) with and
// without verification, in one run. Sizes are those of offload's reads: a JPEG (128 KiB), a
// clip (1 MiB), and a ReadRange at its cap (16 MiB).
//
//	go test -run '^$' -bench BenchmarkRead -benchtime 2s ./datanode-ext/replica/
func BenchmarkRead(b *testing.B) {
	const size = 64 << 20
	data := randomData(size)
	for _, typ := range []struct {
		name string
		typ  int
	}{{"crc32c", TypeCRC32C}, {"crc32", TypeCRC32}} {
		f := writeReplica(b, data, typ.typ, 512)
		for _, n := range []int64{128 << 10, 1 << 20, 16 << 20} {
			for _, verify := range []bool{false, true} {
				name := fmt.Sprintf("%s/%dKiB/unverified", typ.name, n>>10)
				if verify {
					name = fmt.Sprintf("%s/%dKiB/verified", typ.name, n>>10)
				}
				b.Run(name, func(b *testing.B) {
					b.SetBytes(n)
					off := int64(0)
					for b.Loop() {
						// An unaligned offset, as a sample inside a tar shard has.
						o := (off*7919 + 333) % (size - n)
						off++
						var err error
						if verify {
							_, err = f.Read(o, n)
						} else {
							_, err = f.ReadUnverified(o, n)
						}
						if err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}
