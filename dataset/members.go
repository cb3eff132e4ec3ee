package dataset

import (
	"fmt"

	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// Member is one member of a sample with its bytes: the tar member "<key>.<Name>".
type Member struct {
	Name string
	// Media is DATASET_MEDIA_UNKNOWN for a member that is not media (a label, a caption,
	// metadata).
	Media pb.DatasetMedia
	Data  []byte
}

// IsMedia reports whether the member is an image or a clip (what graphs transform); the
// others travel to the trainer raw.
func (m Member) IsMedia() bool { return m.Media != pb.DatasetMedia_DATASET_MEDIA_UNKNOWN }

// checkMembers validates the members of one sample of an index of version v: a version 1
// sample has none; a version 2 sample has 1..MaxMembers, each with a unique printable name of
// at most MaxMemberName bytes and a byte range inside the sample's (itself inside its file),
// and at least one media member, the first of which the sample's media names.
func checkMembers(v uint32, s *pb.DatasetSample) error {
	ms := s.GetMembers()
	if v < 2 {
		if len(ms) > 0 {
			return fmt.Errorf("%w: sample %q: a version %d index has no members", ErrInvalid, s.GetKey(), v)
		}
		return nil
	}
	if len(ms) == 0 || len(ms) > MaxMembers {
		return fmt.Errorf("%w: sample %q has %d members, want 1..%d", ErrInvalid, s.GetKey(), len(ms), MaxMembers)
	}
	lo, hi := s.GetOffset(), s.GetOffset()+s.GetLength() // Parse checked these do not overflow
	primary := -1
	for i, mb := range ms {
		name := mb.GetName()
		if err := checkMemberName(name); err != nil {
			return fmt.Errorf("%w: sample %q member %d: %v", ErrInvalid, s.GetKey(), i, err)
		}
		for _, o := range ms[:i] {
			if o.GetName() == name {
				return fmt.Errorf("%w: sample %q: member %q listed twice", ErrInvalid, s.GetKey(), name)
			}
		}
		off, n := mb.GetOffset(), mb.GetLength()
		if off < lo || n < 0 || off > hi || n > hi-off { // no off+n: it can overflow
			return fmt.Errorf("%w: sample %q: member %q range [%d, +%d) outside the sample's [%d, +%d)", ErrInvalid, s.GetKey(), name, off, n, lo, s.GetLength())
		}
		if _, ok := pb.DatasetMedia_name[int32(mb.GetMedia())]; !ok {
			return fmt.Errorf("%w: sample %q: member %q has media %d", ErrInvalid, s.GetKey(), name, mb.GetMedia())
		}
		if primary < 0 && mb.GetMedia() != pb.DatasetMedia_DATASET_MEDIA_UNKNOWN {
			primary = i
		}
	}
	if primary < 0 {
		return fmt.Errorf("%w: sample %q has no media member", ErrInvalid, s.GetKey())
	}
	if ms[primary].GetMedia() != s.GetMedia() {
		return fmt.Errorf("%w: sample %q: media %v, its first media member %q is %v", ErrInvalid, s.GetKey(), s.GetMedia(), ms[primary].GetName(), ms[primary].GetMedia())
	}
	return nil
}

func checkMemberName(name string) error {
	if name == "" || len(name) > MaxMemberName {
		return fmt.Errorf("a member name has 1..%d bytes, not %d", MaxMemberName, len(name))
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c <= 0x20 || c > 0x7e || c == '/' {
			return fmt.Errorf("member name %q: only printable ASCII without space or '/'", name)
		}
	}
	return nil
}

// Split cuts the members of sample i out of its bytes (data: the sample's byte range as the
// index gives it, offset/length). It returns the primary media member (the graph's "input")
// and every member in index order, each aliasing data. A version 1 sample is its one media
// member, unnamed.
func (ix *Index) Split(i int, data []byte) (primary []byte, members []Member, err error) {
	s := ix.Sample(i)
	if int64(len(data)) != s.GetLength() {
		return nil, nil, fmt.Errorf("%w: sample %q: %d bytes, the index says %d", ErrInvalid, s.GetKey(), len(data), s.GetLength())
	}
	ms := s.GetMembers()
	if len(ms) == 0 {
		return data, []Member{{Media: s.GetMedia(), Data: data}}, nil
	}
	members = make([]Member, len(ms))
	found := false
	for j, mb := range ms {
		off := mb.GetOffset() - s.GetOffset() // inside data: checked by Parse
		members[j] = Member{Name: mb.GetName(), Media: mb.GetMedia(), Data: data[off : off+mb.GetLength() : off+mb.GetLength()]}
		if !found && members[j].IsMedia() {
			primary, found = members[j].Data, true
		}
	}
	return primary, members, nil
}

// MemberNames returns the names of sample i's members in index order (nil for a version 1
// index).
func (ix *Index) MemberNames(i int) []string {
	ms := ix.Sample(i).GetMembers()
	if len(ms) == 0 {
		return nil
	}
	out := make([]string, len(ms))
	for j, mb := range ms {
		out[j] = mb.GetName()
	}
	return out
}
