package replica

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeReplica writes a replica of data with a checksum file of typ and bpc and returns it.
func writeReplica(t testing.TB, data []byte, typ, bpc int) File {
	t.Helper()
	dir := t.TempDir()
	f := File{Data: filepath.Join(dir, "blk_7"), Meta: filepath.Join(dir, "blk_7_1001.meta"), Size: int64(len(data)), BlockID: 7}
	if err := os.WriteFile(f.Data, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.Meta, Meta(data, typ, bpc), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

func randomData(n int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// TestMetaFormat pins the checksum file's layout against values computed by hand: version 1
// big-endian, the type byte, bytesPerChecksum big-endian, then big-endian CRCs per chunk (the
// last one over the short tail), CRC32C being Castagnoli and CRC32 IEEE.
func TestMetaFormat(t *testing.T) {
	data := []byte("0123456789") // chunks "01234567" and "89" at bpc 8
	m := Meta(data, TypeCRC32C, 8)
	want := []byte{0, 1, 2, 0, 0, 0, 8}
	cas := crc32.MakeTable(crc32.Castagnoli)
	want = binary.BigEndian.AppendUint32(want, crc32.Checksum(data[:8], cas))
	want = binary.BigEndian.AppendUint32(want, crc32.Checksum(data[8:], cas))
	if !bytes.Equal(m, want) {
		t.Fatalf("CRC32C meta %x, want %x", m, want)
	}
	// Known value: CRC-32C of "123456789" is e3069283, CRC-32 (IEEE) cbf43926.
	if got := (Header{Type: TypeCRC32C}).Sum([]byte("123456789")); got != 0xe3069283 {
		t.Errorf("CRC32C %08x", got)
	}
	if got := (Header{Type: TypeCRC32}).Sum([]byte("123456789")); got != 0xcbf43926 {
		t.Errorf("CRC32 %08x", got)
	}
	if m := Meta(data, TypeNull, 512); !bytes.Equal(m, []byte{0, 1, 0, 0, 0, 2, 0}) {
		t.Errorf("NULL meta %x: a header only", m)
	}
}

// TestReadVerifies: every range of a good replica reads back as written, for each checksum
// type and chunk size, including ranges that start and end inside chunks and the short last
// chunk.
func TestReadVerifies(t *testing.T) {
	data := randomData(5000) // 9 chunks of 512 and a short one
	for _, typ := range []int{TypeNull, TypeCRC32, TypeCRC32C} {
		for _, bpc := range []int{512, 1000, 8192} {
			f := writeReplica(t, data, typ, bpc)
			for _, rg := range [][2]int64{{0, 5000}, {0, 1}, {511, 2}, {512, 512}, {4999, 1}, {4608, 392}, {1234, 2345}, {5000, 0}, {0, 0}} {
				got, err := f.Read(rg[0], rg[1])
				if err != nil || !bytes.Equal(got, data[rg[0]:rg[0]+rg[1]]) {
					t.Fatalf("type %d bpc %d [%d, +%d): %d bytes, %v", typ, bpc, rg[0], rg[1], len(got), err)
				}
				if int64(cap(got)) != rg[1] {
					t.Errorf("type %d bpc %d [%d, +%d): the answer's capacity %d lets a caller append into the chunk buffer", typ, bpc, rg[0], rg[1], cap(got))
				}
			}
		}
	}
}

// TestFlippedByte: one flipped bit anywhere fails exactly the reads whose chunks cover it, as
// ErrCorrupt naming the chunk; NULL checksums cannot see it.
func TestFlippedByte(t *testing.T) {
	data := randomData(3000)
	for _, typ := range []int{TypeCRC32, TypeCRC32C} {
		f := writeReplica(t, data, typ, 512)
		bad := append([]byte(nil), data...)
		bad[1300] ^= 0x10 // chunk 2: [1024, 1536)
		if err := os.WriteFile(f.Data, bad, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, rg := range [][2]int64{{0, 3000}, {1300, 1}, {1100, 10}, {1530, 100}, {1000, 30}} {
			_, err := f.Read(rg[0], rg[1])
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "chunk 2 (bytes [1024, 1536))") {
				t.Errorf("type %d [%d, +%d): %v, want ErrCorrupt naming chunk 2", typ, rg[0], rg[1], err)
			}
		}
		// Ranges whose chunks do not cover the flipped byte read fine.
		for _, rg := range [][2]int64{{0, 1024}, {1536, 1464}, {1023, 1}} {
			if got, err := f.Read(rg[0], rg[1]); err != nil || !bytes.Equal(got, data[rg[0]:rg[0]+rg[1]]) {
				t.Errorf("type %d [%d, +%d): %v", typ, rg[0], rg[1], err)
			}
		}
		// A flipped checksum is corruption too.
		m, _ := os.ReadFile(f.Meta)
		m[HeaderLen+4*5] ^= 1
		os.WriteFile(f.Meta, m, 0o600)
		os.WriteFile(f.Data, data, 0o600)
		if _, err := f.Read(2600, 10); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "chunk 5") {
			t.Errorf("type %d, flipped checksum: %v", typ, err)
		}
	}
	f := writeReplica(t, data, TypeNull, 512)
	bad := append([]byte(nil), data...)
	bad[10] ^= 1
	os.WriteFile(f.Data, bad, 0o600)
	if got, err := f.Read(0, 20); err != nil || !bytes.Equal(got, bad[:20]) {
		t.Errorf("NULL checksums: %v (nothing to verify against)", err)
	}
}

// TestTruncated: a checksum file with fewer checksums than chunks, or none at all, and a data
// file shorter than the block are corrupt; a checksum file that cannot be opened is
// unverifiable (read elsewhere, report nothing). No error names a path.
func TestTruncated(t *testing.T) {
	data := randomData(2048)
	for _, tc := range []struct {
		name string
		edit func(f File)
		off  int64
		n    int64
		err  error
		msg  string
	}{
		{"checksums cut", func(f File) { os.Truncate(f.Meta, HeaderLen+4*2) }, 1500, 10, ErrCorrupt, "checksum file ends before byte"},
		{"half a checksum", func(f File) { os.Truncate(f.Meta, HeaderLen+4*3+2) }, 1600, 10, ErrCorrupt, "checksum file ends"},
		{"header cut", func(f File) { os.Truncate(f.Meta, 5) }, 0, 10, ErrCorrupt, "no header"},
		{"empty checksum file", func(f File) { os.Truncate(f.Meta, 0) }, 0, 10, ErrCorrupt, "no header"},
		{"unknown type", func(f File) { m, _ := os.ReadFile(f.Meta); m[2] = 9; os.WriteFile(f.Meta, m, 0o600) }, 0, 10, ErrCorrupt, "checksum type 9"},
		{"zero bytes per checksum", func(f File) {
			m, _ := os.ReadFile(f.Meta)
			copy(m[3:], []byte{0, 0, 0, 0})
			os.WriteFile(f.Meta, m, 0o600)
		}, 0, 10, ErrCorrupt, "0 bytes per checksum"},
		{"negative bytes per checksum", func(f File) {
			m, _ := os.ReadFile(f.Meta)
			copy(m[3:], []byte{0x80, 0, 0, 0})
			os.WriteFile(f.Meta, m, 0o600)
		}, 0, 10, ErrCorrupt, "bytes per checksum"},
		{"data cut", func(f File) { os.Truncate(f.Data, 1000) }, 900, 200, ErrCorrupt, "replica ends before byte"},
		{"no checksum file", func(f File) { os.Remove(f.Meta) }, 0, 10, ErrUnverifiable, "open checksum file: no such file or directory"},
		{"no replica", func(f File) { os.Remove(f.Data) }, 0, 10, ErrUnverifiable, "open replica: no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := writeReplica(t, data, TypeCRC32C, 512)
			tc.edit(f)
			_, err := f.Read(tc.off, tc.n)
			if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("%v, want %v saying %q", err, tc.err, tc.msg)
			}
			if strings.Contains(err.Error(), filepath.Dir(f.Data)) {
				t.Errorf("error names the replica's directory: %v", err)
			}
		})
	}
	// A version other than 1 is read as the DataNode reads it (it only logs it).
	f := writeReplica(t, data, TypeCRC32C, 512)
	m, _ := os.ReadFile(f.Meta)
	m[1] = 2
	os.WriteFile(f.Meta, m, 0o600)
	if got, err := f.Read(0, 100); err != nil || !bytes.Equal(got, data[:100]) {
		t.Errorf("meta version 2: %v", err)
	}
}

// TestRangeChecks: ranges outside the block, including ones whose end overflows int64, are
// refused before a file is opened or a byte allocated.
func TestRangeChecks(t *testing.T) {
	f := File{Data: "/nonexistent/blk_1", Meta: "/nonexistent/blk_1.meta", Size: 100, BlockID: 1}
	for _, rg := range [][2]int64{{-1, 1}, {0, -1}, {0, 101}, {100, 1}, {101, 0}, {1, math.MaxInt64}, {math.MaxInt64, 1}, {50, math.MaxInt64 - 10}} {
		if _, err := f.Read(rg[0], rg[1]); !errors.Is(err, ErrRange) {
			t.Errorf("[%d, +%d): %v, want ErrRange", rg[0], rg[1], err)
		}
	}
}
