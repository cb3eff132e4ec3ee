package dataset

import (
	"fmt"

	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// Piece is the part of a byte range of a file that lies in one block.
type Piece struct {
	Block *pb.LocatedBlock
	// Offset within the block and length of the piece.
	Offset, Length int64
}

// Pieces splits the byte range [off, off+n) of a file into per-block pieces, in order.
func Pieces(lb *pb.LocatedBlocks, off, n int64) ([]Piece, error) {
	if off < 0 || n < 0 || off > lb.GetFileLength() || n > lb.GetFileLength()-off { // no off+n: it can overflow
		return nil, fmt.Errorf("%w: range [%d, +%d) outside a file of %d bytes", ErrInvalid, off, n, lb.GetFileLength())
	}
	var out []Piece
	end := off + n
	for _, b := range lb.GetBlocks() {
		bs, be := b.GetOffset(), b.GetOffset()+b.GetNumBytes()
		lo, hi := max(bs, off), min(be, end)
		if lo < hi {
			out = append(out, Piece{Block: b, Offset: lo - bs, Length: hi - lo})
		}
	}
	var got int64
	for _, p := range out {
		got += p.Length
	}
	if got != n {
		return nil, fmt.Errorf("%w: blocks cover %d of the %d bytes at offset %d", ErrInvalid, got, n, off)
	}
	return out, nil
}

// HeldBytes returns, per member (DataNode UUID), how many bytes of [off, off+n) its DataNode
// stores according to the block locations. This is the input of schedule.Owners.
func HeldBytes(lb *pb.LocatedBlocks, off, n int64, members []string) []int64 {
	out := make([]int64, len(members))
	ps, err := Pieces(lb, off, n)
	if err != nil {
		return out
	}
	for _, p := range ps {
		for _, loc := range p.Block.GetLocations() {
			for m, uuid := range members {
				if loc.GetUuid() == uuid {
					out[m] += p.Length
				}
			}
		}
	}
	return out
}
