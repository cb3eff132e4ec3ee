package offload

import (
	"context"

	"github.com/newtricks/newtricks/dataset"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
	"github.com/newtricks/newtricks/schedule"
	"github.com/newtricks/newtricks/xformgraph"
)

// A sample is all of its members (issue 21): the node reads the sample's byte range (every
// member, dataset.Index.Split cuts them out), runs the graph with the primary media member as
// "input" and every member by name ("input:NAME"), and answers the tensors with the members
// that are not media beside them, raw. A raw answer is the whole byte range in one raw frame
// (session.go: raw): the reader cuts the members out with its own copy of the index.

// transform reads and transforms one slot into NTXF frames and returns the sample's non-media
// members.
func (s *Session) transform(ctx context.Context, sl schedule.Slot, maxRead int64) ([]byte, []dataset.Member, error) {
	data, smp, err := s.readSample(ctx, sl, maxRead)
	if err != nil {
		return nil, nil, err
	}
	primary, members, err := s.idx[sl.Source].Split(sl.Index, data)
	if err != nil {
		return nil, nil, err
	}
	out, err := s.graphs[sl.Source].Run(ctx, xformgraph.Sample{Key: smp.GetKey(), Epoch: sl.Epoch, Data: primary, Members: byName(members)})
	if err != nil {
		return nil, nil, err
	}
	frames, err := out.AppendFrames(nil)
	if err != nil {
		return nil, nil, err
	}
	return frames, nonMedia(members), nil
}

// byName maps the named members to their bytes (a version 1 sample's one member is unnamed:
// only "input" reads it).
func byName(ms []dataset.Member) map[string][]byte {
	out := make(map[string][]byte, len(ms))
	for _, m := range ms {
		if m.Name != "" {
			out[m.Name] = m.Data
		}
	}
	return out
}

// nonMedia keeps the members that travel raw, copied out of the sample's buffer (which the
// media members make large) into one of their own.
func nonMedia(ms []dataset.Member) []dataset.Member {
	n := 0
	for _, m := range ms {
		if !m.IsMedia() {
			n += len(m.Data)
		}
	}
	buf := make([]byte, 0, n)
	var out []dataset.Member
	for _, m := range ms {
		if !m.IsMedia() {
			buf = append(buf, m.Data...)
			out = append(out, dataset.Member{Name: m.Name, Data: buf[len(buf)-len(m.Data) : len(buf) : len(buf)]})
		}
	}
	return out
}

// membersSize is the bytes of the members' data.
func membersSize(ms []dataset.Member) int64 {
	var n int64
	for _, m := range ms {
		n += int64(len(m.Data))
	}
	return n
}

// membersToProto converts the members of an answered sample.
func membersToProto(ms []dataset.Member) []*pb.SampleMember {
	if len(ms) == 0 {
		return nil
	}
	out := make([]*pb.SampleMember, len(ms))
	for i, m := range ms {
		out[i] = &pb.SampleMember{Name: m.Name, Data: m.Data}
	}
	return out
}
