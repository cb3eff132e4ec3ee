package reader

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/newtricks/newtricks/dataset"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
	"github.com/newtricks/newtricks/xformgraph"
	"github.com/newtricks/newtricks/xformgraph/frame"
)

// run cuts sample i's members out of its bytes (the index's byte range), runs the graph with
// the primary media member as "input" and every member by name, and returns the frames and
// the non-media members (copied: data may be a pooled or large buffer).
func (s *source) run(ctx context.Context, i int, key string, epoch uint64, data []byte) ([]byte, []dataset.Member, error) {
	if n := int64(len(data)); n > s.graph.Limits.MaxInputBytes {
		return nil, nil, fmt.Errorf("%w: sample of %d bytes, more than the graph's input limit (%d)", xformgraph.ErrLimit, n, s.graph.Limits.MaxInputBytes)
	}
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

// matchMembers checks the members a node sent with a sample's tensors against the reader's
// own index: exactly the sample's non-media members, in index order, each of the index's
// length. The reader's index, not the node, says what a sample holds.
func matchMembers(ix *dataset.Index, i int, got []*pb.SampleMember) error {
	j := 0
	for _, mb := range ix.Sample(i).GetMembers() {
		if mb.GetMedia() != pb.DatasetMedia_DATASET_MEDIA_UNKNOWN {
			continue
		}
		if j >= len(got) {
			return fmt.Errorf("%w: member %q missing", frame.ErrFormat, mb.GetName())
		}
		if g := got[j]; g.GetName() != mb.GetName() || int64(len(g.GetData())) != mb.GetLength() {
			return fmt.Errorf("%w: member %d is %q of %d bytes, the index says %q of %d", frame.ErrFormat, j, g.GetName(), len(g.GetData()), mb.GetName(), mb.GetLength())
		}
		j++
	}
	if j != len(got) {
		return fmt.Errorf("%w: %d members, the index has %d", frame.ErrFormat, len(got), j)
	}
	return nil
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
// handlers, on the extension after the name's last dot, lower-cased as WebDataset lower-cases
// member names): "cls", "cls2", "index", "inx", "id" -> int64 (Python's int() of the text:
// ASCII spaces around it, an optional sign, digits with single underscores between them);
// "txt", "text", "transcript" -> string (UTF-8); "json", "jsn" -> the decoded JSON value
// (numbers as json.Number, exactly one value); anything else -> the raw []byte (pickles,
// torch files and other code-carrying formats are never decoded).
func Decode(name string, data []byte) (any, error) {
	ext := name
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		ext = name[i+1:]
	}
	switch strings.ToLower(ext) {
	case "cls", "cls2", "index", "inx", "id":
		v, err := parseInt(data)
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
		d := json.NewDecoder(bytes.NewReader(data))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			return nil, fmt.Errorf("member %q: %w", name, err)
		}
		if _, err := d.Token(); err != io.EOF {
			return nil, fmt.Errorf("member %q: more than one JSON value", name)
		}
		return v, nil
	}
	return data, nil
}

// parseInt reads an integer as Python's int() reads bytes: ASCII whitespace around it, an
// optional sign, decimal digits with single underscores between them.
func parseInt(b []byte) (int64, error) {
	s := strings.Trim(string(b), " \t\n\r\v\f")
	digits := strings.TrimLeft(s, "+-")
	if len(s)-len(digits) > 1 || digits == "" || digits[0] == '_' || digits[len(digits)-1] == '_' || strings.Contains(digits, "__") {
		return 0, fmt.Errorf("%q", b)
	}
	return strconv.ParseInt(s[:len(s)-len(digits)]+strings.ReplaceAll(digits, "_", ""), 10, 64)
}

// primaryName is the name of a sample's first media member ("" without members).
func primaryName(s *pb.DatasetSample) string {
	for _, m := range s.GetMembers() {
		if m.GetMedia() != pb.DatasetMedia_DATASET_MEDIA_UNKNOWN {
			return m.GetName()
		}
	}
	return ""
}

// Outputs returns the names of source's graph outputs (the node ids, in frame order).
func (r *Reader) Outputs(source int) []string { return r.srcs[source].graph.Outputs }

// OutputSources returns, for each of source's graph outputs, the member it is made from: ""
// for the primary media member ("input"; Sample.Primary names it), else the member's name
// ("input:NAME").
func (r *Reader) OutputSources(source int) []string { return r.srcs[source].graph.Sources }
