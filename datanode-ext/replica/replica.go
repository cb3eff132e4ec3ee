// Package replica reads byte ranges of a DataNode's replica files and verifies them against the
// block's checksum file (blk_<id>_<genstamp>.meta), as the DataNode verifies a replica before it
// serves it (BlockSender) and as its block scanner does.
//
// The checksum file is BlockMetadataHeader: a 2-byte version (1), the DataChecksum header (a
// 1-byte type: 0 NULL, 1 CRC32, 2 CRC32C; a 4-byte big-endian bytesPerChecksum), then one
// 4-byte big-endian checksum per chunk of bytesPerChecksum bytes of the block (the last chunk
// may be shorter). A range is verified by reading the whole chunks that cover it.
//
// Errors never name a local path: they go back to remote callers. ErrCorrupt means the replica
// is bad (its bytes fail their checksums, its data or checksum file is shorter than the block
// says, or the checksum header is not one HDFS writes) and should be reported to the NameNode;
// ErrUnverifiable means the range could not be checked (no checksum file, an I/O error): read
// it from another replica, report nothing.
package replica

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Errors of a read.
var (
	// ErrCorrupt: the replica does not match its checksums.
	ErrCorrupt = errors.New("corrupt replica")
	// ErrUnverifiable: the replica could not be read or checked (it may be fine).
	ErrUnverifiable = errors.New("replica not readable")
	// ErrRange: the range lies outside the block.
	ErrRange = errors.New("range outside the block")
)

// Checksum types of DataChecksum.Type.
const (
	TypeNull   = 0
	TypeCRC32  = 1
	TypeCRC32C = 2
)

// HeaderLen is the checksum file's header: version (2), type (1), bytesPerChecksum (4).
const HeaderLen = 7

// MetaVersion is BlockMetadataHeader.VERSION.
const MetaVersion = 1

// MaxBytesPerChecksum bounds a chunk: a range read grows by up to two chunks. HDFS writes 512
// (dfs.bytes-per-checksum); a header naming more than this is not one it wrote.
const MaxBytesPerChecksum = 16 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Header is a checksum file's DataChecksum header.
type Header struct {
	Type             int
	BytesPerChecksum int
}

// ParseHeader reads the header of a checksum file. An unknown type or a chunk size HDFS does
// not write is ErrCorrupt. A version other than 1 is accepted, as the DataNode does (it only
// logs it).
func ParseHeader(b []byte) (Header, error) {
	if len(b) < HeaderLen {
		return Header{}, fmt.Errorf("%w: checksum file of %d bytes has no header", ErrCorrupt, len(b))
	}
	h := Header{Type: int(b[2]), BytesPerChecksum: int(int32(binary.BigEndian.Uint32(b[3:7])))}
	switch h.Type {
	case TypeNull, TypeCRC32, TypeCRC32C:
	default:
		return Header{}, fmt.Errorf("%w: checksum type %d", ErrCorrupt, h.Type)
	}
	if h.BytesPerChecksum <= 0 || h.BytesPerChecksum > MaxBytesPerChecksum {
		return Header{}, fmt.Errorf("%w: %d bytes per checksum", ErrCorrupt, h.BytesPerChecksum)
	}
	return h, nil
}

// Sum is the checksum of one chunk under h's type (0 for NULL).
func (h Header) Sum(chunk []byte) uint32 {
	switch h.Type {
	case TypeCRC32:
		return crc32.ChecksumIEEE(chunk)
	case TypeCRC32C:
		return crc32.Checksum(chunk, castagnoli)
	}
	return 0
}

// File is a replica as the DataNode resolved it: its data and checksum files and the block's
// length (the DataNode's visible length; a replica being appended to may hold more on disk).
type File struct {
	Data, Meta string
	Size       int64
	// BlockID names the block in errors.
	BlockID int64
}

// Read returns [off, off+n) of the block, verified against the checksum file. The range is
// checked against Size before anything is opened or allocated; the buffer is the covering
// chunks, at most n + 2*bytesPerChecksum bytes.
func (f File) Read(off, n int64) ([]byte, error) {
	return f.read(off, n, true)
}

// ReadUnverified returns [off, off+n) of the block without looking at its checksums (the
// baseline of the benchmark, and the behaviour before checksums were verified).
func (f File) ReadUnverified(off, n int64) ([]byte, error) {
	return f.read(off, n, false)
}

func (f File) read(off, n int64, verify bool) ([]byte, error) {
	if off < 0 || n < 0 || off > f.Size || n > f.Size-off {
		return nil, fmt.Errorf("%w: [%d, +%d) of block %d of %d bytes", ErrRange, off, n, f.BlockID, f.Size)
	}
	if n == 0 {
		return []byte{}, nil
	}
	data, err := os.Open(f.Data)
	if err != nil {
		return nil, fmt.Errorf("%w: block %d: open replica: %v", ErrUnverifiable, f.BlockID, errno(err))
	}
	defer data.Close()
	if !verify {
		buf := make([]byte, n)
		if err := readAt(data, buf, off); err != nil {
			return nil, f.short("replica", off, n, err)
		}
		return buf, nil
	}
	meta, err := os.Open(f.Meta)
	if err != nil {
		return nil, fmt.Errorf("%w: block %d: open checksum file: %v", ErrUnverifiable, f.BlockID, errno(err))
	}
	defer meta.Close()
	var hb [HeaderLen]byte
	if err := readAt(meta, hb[:], 0); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%w: block %d: checksum file has no header", ErrCorrupt, f.BlockID)
		}
		return nil, fmt.Errorf("%w: block %d: read checksum file: %v", ErrUnverifiable, f.BlockID, errno(err))
	}
	h, err := ParseHeader(hb[:])
	if err != nil {
		return nil, fmt.Errorf("block %d: %w", f.BlockID, err)
	}
	if h.Type == TypeNull {
		buf := make([]byte, n)
		if err := readAt(data, buf, off); err != nil {
			return nil, f.short("replica", off, n, err)
		}
		return buf, nil
	}
	bpc := int64(h.BytesPerChecksum)
	c0, c1 := off/bpc, (off+n+bpc-1)/bpc // chunks [c0, c1) cover the range
	start, end := c0*bpc, min(c1*bpc, f.Size)
	buf := make([]byte, end-start)
	if err := readAt(data, buf, start); err != nil {
		return nil, f.short("replica", start, end-start, err)
	}
	sums := make([]byte, 4*(c1-c0))
	if err := readAt(meta, sums, HeaderLen+4*c0); err != nil {
		return nil, f.short("checksum file", HeaderLen+4*c0, int64(len(sums)), err)
	}
	for i := int64(0); i < c1-c0; i++ {
		lo := i * bpc
		hi := min(lo+bpc, int64(len(buf)))
		want := binary.BigEndian.Uint32(sums[4*i:])
		if got := h.Sum(buf[lo:hi]); got != want {
			return nil, fmt.Errorf("%w: block %d: checksum of chunk %d (bytes [%d, %d)) is %08x, the checksum file has %08x",
				ErrCorrupt, f.BlockID, c0+i, start+lo, start+hi, got, want)
		}
	}
	return buf[off-start : off-start+n : off-start+n], nil
}

// short is the error of a read that did not get its bytes: a file that ends early is corrupt
// (the block is longer than its replica, or has fewer checksums than chunks), anything else
// could not be read.
func (f File) short(what string, off, n int64, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: block %d: %s ends before byte %d (block of %d bytes)", ErrCorrupt, f.BlockID, what, off+n, f.Size)
	}
	return fmt.Errorf("%w: block %d: read %s: %v", ErrUnverifiable, f.BlockID, what, errno(err))
}

// readAt fills buf from off; a short read is io.ErrUnexpectedEOF.
func readAt(f *os.File, buf []byte, off int64) error {
	n, err := f.ReadAt(buf, off)
	if n == len(buf) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// errno strips the path from a file system error: callers see "no such file or directory",
// never where the DataNode keeps its replicas.
func errno(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		var en syscall.Errno
		if errors.As(pe.Err, &en) {
			return en
		}
		return errors.New(pe.Op + ": " + pe.Err.Error())
	}
	return err
}

// Meta returns the checksum file the DataNode writes for a block holding data: the header
// (version 1, typ, bpc), then one checksum per chunk. Tests use it to make replicas.
func Meta(data []byte, typ, bpc int) []byte {
	h := Header{Type: typ, BytesPerChecksum: bpc}
	out := make([]byte, HeaderLen, HeaderLen+4*(len(data)/max(bpc, 1)+1))
	binary.BigEndian.PutUint16(out, MetaVersion)
	out[2] = byte(typ)
	binary.BigEndian.PutUint32(out[3:], uint32(bpc))
	if typ == TypeNull {
		return out
	}
	for lo := 0; lo < len(data); lo += bpc {
		out = binary.BigEndian.AppendUint32(out, h.Sum(data[lo:min(lo+bpc, len(data))]))
	}
	return out
}
