package reader

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/newtricks/newtricks/dataset"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
	"github.com/newtricks/newtricks/xformgraph"
)

// run cuts sample i's members out of its bytes (the index's byte range), runs the graph with
// the primary media member as "input" and every member by name, and returns the frames and
// the non-media members (copied: data may be a pooled or large buffer).
func (s *source) run(ctx context.Context, i int, key string, epoch uint64, data []byte) ([]byte, []dataset.Member, error) {
	primary, ms, err := s.ix.Split(i, data)
	if err != nil {
		return nil, nil, err
	}
	named := make(map[string][]byte, len(ms))
	for _, m := range ms {
		if m.Name != "" {
			named[m.Name] = m.Data
		}
	}
	out, err := s.graph.Run(ctx, xformgraph.Sample{Key: key, Epoch: epoch, Data: primary, Members: named})
	if err != nil {
		return nil, nil, err
	}
	frames, err := out.AppendFrames(nil)
	if err != nil {
		return nil, nil, err
	}
	return frames, copyNonMedia(ms), nil
}

func copyNonMedia(ms []dataset.Member) []dataset.Member {
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

// membersFromProto takes a node's members (their data aliases the sample's pooled buffer).
func membersFromProto(ms []*pb.SampleMember) []dataset.Member {
	if len(ms) == 0 {
		return nil
	}
	out := make([]dataset.Member, len(ms))
	for i, m := range ms {
		out[i] = dataset.Member{Name: m.GetName(), Data: m.GetData()}
	}
	return out
}

// Member returns the sample's member of that name (a non-media member: label, caption,
// metadata).
func (s *Sample) Member(name string) ([]byte, bool) {
	for _, m := range s.Members {
		if m.Name == name {
			return m.Data, true
		}
	}
	return nil, false
}

// Decode reads a member by WebDataset's default rules (webdataset.autodecode's basic
// handlers, on the extension after the name's last dot): "cls", "cls2", "class", "count",
// "index", "inx", "id" -> int64 (an int64 parsed from the text, spaces around it allowed);
// "txt", "text", "transcript" -> string (UTF-8); "json", "jsn" -> the decoded JSON value
// (numbers as json.Number); anything else -> the raw []byte.
func Decode(name string, data []byte) (any, error) {
	ext := name
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		ext = name[i+1:]
	}
	switch strings.ToLower(ext) {
	case "cls", "cls2", "class", "count", "index", "inx", "id":
		v, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("member %q: not an integer: %w", name, err)
		}
		return v, nil
	case "txt", "text", "transcript":
		if !utf8.Valid(data) {
			return nil, fmt.Errorf("member %q: not UTF-8", name)
		}
		return string(data), nil
	case "json", "jsn":
		d := json.NewDecoder(strings.NewReader(string(data)))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			return nil, fmt.Errorf("member %q: %w", name, err)
		}
		return v, nil
	}
	return data, nil
}
