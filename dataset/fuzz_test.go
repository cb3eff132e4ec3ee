package dataset

import (
	"testing"

	"google.golang.org/protobuf/proto"

	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// FuzzParseIndex: an index is read from a file any writer of the dataset directory made, so
// Parse must refuse anything malformed without panicking, and what it accepts must keep its
// promise: every sample lies inside its file.
func FuzzParseIndex(f *testing.F) {
	good := &pb.DatasetIndex{Version: Version, Root: "/data/ds", Files: []*pb.DatasetFile{{Path: "a.tar", Length: 100}},
		Samples: []*pb.DatasetSample{{Key: "k", File: 0, Offset: 10, Length: 20, Cost: 1}}}
	b, _ := Marshal(good)
	f.Add(b)
	huge := proto.Clone(good).(*pb.DatasetIndex)
	huge.Samples[0].Offset, huge.Samples[0].Length = 1<<62, 1<<62
	b, _ = Marshal(huge)
	f.Add(b)
	v2 := &pb.DatasetIndex{Version: Version, Root: "/data/ds", Files: []*pb.DatasetFile{{Path: "a.tar", Length: 100, Tar: true}},
		Samples: []*pb.DatasetSample{{Key: "k", File: 0, Offset: 10, Length: 50, Cost: 1, Media: pb.DatasetMedia_DATASET_MEDIA_JPEG,
			Members: []*pb.DatasetMember{{Name: "cls", Offset: 10, Length: 1}, {Name: "jpg", Offset: 20, Length: 30, Media: pb.DatasetMedia_DATASET_MEDIA_JPEG}}}}}
	b, _ = Marshal(v2)
	f.Add(b)
	v2.Samples[0].Members[0].Offset, v2.Samples[0].Members[0].Length = 1<<62, 1<<62
	b, _ = Marshal(v2)
	f.Add(b)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		ix, err := Parse(b)
		if err != nil {
			return
		}
		for i := 0; i < ix.Len(); i++ {
			s := ix.Sample(i)
			fl := ix.Files()[s.GetFile()].GetLength()
			if s.GetOffset() < 0 || s.GetLength() < 0 || s.GetOffset() > fl || s.GetLength() > fl-s.GetOffset() {
				t.Fatalf("accepted sample %q [%d, +%d) outside its file of %d bytes", s.GetKey(), s.GetOffset(), s.GetLength(), fl)
			}
			if len(s.GetMembers()) > MaxMembers {
				t.Fatalf("accepted %d members", len(s.GetMembers()))
			}
			for _, mb := range s.GetMembers() {
				if mb.GetOffset() < s.GetOffset() || mb.GetLength() < 0 || mb.GetOffset() > s.GetOffset()+s.GetLength() || mb.GetLength() > s.GetOffset()+s.GetLength()-mb.GetOffset() || len(mb.GetName()) > MaxMemberName {
					t.Fatalf("accepted member %q [%d, +%d) outside its sample [%d, +%d)", mb.GetName(), mb.GetOffset(), mb.GetLength(), s.GetOffset(), s.GetLength())
				}
			}
			if _, _, err := ix.Split(i, make([]byte, min(s.GetLength(), 1<<16))); err != nil && s.GetLength() <= 1<<16 {
				t.Fatalf("Split of an accepted sample: %v", err)
			}
		}
	})
}

// FuzzPieces: block lists and ranges from anywhere (a caller, an index) either split into
// pieces that lie inside their blocks and add up to the range, or fail; never a panic.
func FuzzPieces(f *testing.F) {
	lb := &pb.LocatedBlocks{FileLength: 300, Blocks: []*pb.LocatedBlock{{BlockId: 1, NumBytes: 128, Offset: 0}, {BlockId: 2, NumBytes: 128, Offset: 128}, {BlockId: 3, NumBytes: 44, Offset: 256}}}
	b, _ := proto.Marshal(lb)
	f.Add(b, int64(100), int64(100))
	f.Add(b, int64(1<<62), int64(1<<62))
	f.Add(b, int64(-1), int64(5))
	f.Fuzz(func(t *testing.T, b []byte, off, n int64) {
		var lb pb.LocatedBlocks
		if proto.Unmarshal(b, &lb) != nil {
			return
		}
		ps, err := Pieces(&lb, off, n)
		if err != nil {
			return
		}
		var sum int64
		for _, p := range ps {
			if p.Offset < 0 || p.Length <= 0 || p.Offset > p.Block.GetNumBytes() || p.Length > p.Block.GetNumBytes()-p.Offset {
				t.Fatalf("piece [%d, +%d) outside its block of %d bytes", p.Offset, p.Length, p.Block.GetNumBytes())
			}
			sum += p.Length
		}
		if sum != n {
			t.Fatalf("pieces add up to %d, want %d", sum, n)
		}
	})
}
