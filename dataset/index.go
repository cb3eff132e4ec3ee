package dataset

import (
	"crypto/sha256"
	"fmt"
	"path"
	"sort"

	"google.golang.org/protobuf/proto"

	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// IndexName is the index file's name inside the dataset directory.
const IndexName = "_newtricks_index.pb"

// Version is the index format version Build writes. 2: every sample lists its members
// (DatasetSample.members) and its byte range spans them all. Parse also reads version 1
// (MinVersion), whose samples are their one media member and have no other members: an index
// built before members existed keeps working, without labels or captions, until it is rebuilt
// (rebuilding reads every byte of the dataset, which a large dataset should not be forced
// into by an upgrade).
const Version = 2

// MinVersion is the oldest index format Parse reads.
const MinVersion = 1

// Limits that keep a hostile index from costing a reader or a DataNode memory before it is
// rejected.
const (
	MaxIndexBytes = 512 << 20
	MaxSamples    = 1 << 24
	MaxFiles      = 1 << 22
	// MaxMembers bounds the members of one sample, MaxMemberName the bytes of a member's name.
	MaxMembers    = 256
	MaxMemberName = 128
)

// Index is a loaded, validated dataset index.
type Index struct {
	pb    *pb.DatasetIndex
	sha   [sha256.Size]byte
	bytes int
	byKey map[string]int
}

// Parse validates the serialized index b (the content of IndexName).
func Parse(b []byte) (*Index, error) {
	if len(b) > MaxIndexBytes {
		return nil, fmt.Errorf("%w: index is %d bytes, limit %d", ErrInvalid, len(b), MaxIndexBytes)
	}
	m := &pb.DatasetIndex{}
	if err := proto.Unmarshal(b, m); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	ix, err := FromProto(m)
	if err != nil {
		return nil, err
	}
	ix.sha = sha256.Sum256(b)
	ix.bytes = len(b)
	return ix, nil
}

// FromProto validates m. The SHA-256 of an index built this way is that of its deterministic
// serialization (Marshal).
func FromProto(m *pb.DatasetIndex) (*Index, error) {
	if v := m.GetVersion(); v < MinVersion || v > Version {
		return nil, fmt.Errorf("%w: index version %d, this build reads %d..%d (rebuild the index with this build's `newtricks dataset index`)", ErrInvalid, v, MinVersion, Version)
	}
	if !path.IsAbs(m.GetRoot()) {
		return nil, fmt.Errorf("%w: root %q is not absolute", ErrInvalid, m.GetRoot())
	}
	files, samples := m.GetFiles(), m.GetSamples()
	if len(files) > MaxFiles || len(samples) > MaxSamples {
		return nil, fmt.Errorf("%w: %d files and %d samples, limits %d and %d", ErrInvalid, len(files), len(samples), MaxFiles, MaxSamples)
	}
	if len(samples) == 0 {
		return nil, fmt.Errorf("%w: no samples", ErrInvalid)
	}
	for i, f := range files {
		p := f.GetPath()
		if p == "" || path.IsAbs(p) || path.Clean(p) != p || p == ".." || len(p) > 2 && p[:3] == "../" {
			return nil, fmt.Errorf("%w: file %d: path %q must be relative and clean", ErrInvalid, i, p)
		}
		if i > 0 && files[i-1].GetPath() >= p {
			return nil, fmt.Errorf("%w: files are not in strictly increasing path order at %q", ErrInvalid, p)
		}
		if f.GetLength() < 0 {
			return nil, fmt.Errorf("%w: file %q has length %d", ErrInvalid, p, f.GetLength())
		}
	}
	ix := &Index{pb: m, byKey: make(map[string]int, len(samples))}
	for i, s := range samples {
		if s.GetKey() == "" {
			return nil, fmt.Errorf("%w: sample %d has no key", ErrInvalid, i)
		}
		if _, dup := ix.byKey[s.GetKey()]; dup {
			return nil, fmt.Errorf("%w: duplicate key %q", ErrInvalid, s.GetKey())
		}
		ix.byKey[s.GetKey()] = i
		if int(s.GetFile()) >= len(files) {
			return nil, fmt.Errorf("%w: sample %q: file %d of %d", ErrInvalid, s.GetKey(), s.GetFile(), len(files))
		}
		f := files[s.GetFile()]
		if s.GetOffset() < 0 || s.GetLength() < 0 || s.GetOffset()+s.GetLength() > f.GetLength() || s.GetOffset()+s.GetLength() < s.GetOffset() {
			return nil, fmt.Errorf("%w: sample %q: range [%d, +%d) outside file %q of %d bytes", ErrInvalid, s.GetKey(), s.GetOffset(), s.GetLength(), f.GetPath(), f.GetLength())
		}
		if s.GetCost() < 1 {
			return nil, fmt.Errorf("%w: sample %q: cost %d < 1", ErrInvalid, s.GetKey(), s.GetCost())
		}
		if err := checkMembers(m.GetVersion(), s); err != nil {
			return nil, err
		}
	}
	if ix.sha == [sha256.Size]byte{} {
		b, err := Marshal(m)
		if err != nil {
			return nil, err
		}
		ix.sha, ix.bytes = sha256.Sum256(b), len(b)
	}
	return ix, nil
}

// Marshal serializes an index deterministically (the bytes written to IndexName).
func Marshal(m *pb.DatasetIndex) ([]byte, error) {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("%w: marshal index: %v", ErrInvalid, err)
	}
	return b, nil
}

// Version is the index's format version (MinVersion..Version).
func (ix *Index) Version() uint32 { return ix.pb.GetVersion() }

// Proto returns the index message (do not modify it).
func (ix *Index) Proto() *pb.DatasetIndex { return ix.pb }

// SHA256 identifies this version of the dataset.
func (ix *Index) SHA256() []byte { return ix.sha[:] }

// Root is the dataset directory.
func (ix *Index) Root() string { return ix.pb.GetRoot() }

// Len is the number of samples.
func (ix *Index) Len() int { return len(ix.pb.GetSamples()) }

// Sample returns sample i (0 <= i < Len).
func (ix *Index) Sample(i int) *pb.DatasetSample { return ix.pb.GetSamples()[i] }

// Files returns the files in index order.
func (ix *Index) Files() []*pb.DatasetFile { return ix.pb.GetFiles() }

// FilePath returns the absolute HDFS path of file i.
func (ix *Index) FilePath(i int) string {
	return path.Join(ix.pb.GetRoot(), ix.pb.GetFiles()[i].GetPath())
}

// Lookup returns the position of key.
func (ix *Index) Lookup(key string) (int, bool) {
	i, ok := ix.byKey[key]
	return i, ok
}

// Keys returns the keys in index order (for tests and tools).
func (ix *Index) Keys() []string {
	out := make([]string, 0, ix.Len())
	for _, s := range ix.pb.GetSamples() {
		out = append(out, s.GetKey())
	}
	return out
}

// sortFiles orders entries by path.
func sortFiles(fs []*pb.DatasetFile) {
	sort.Slice(fs, func(i, j int) bool { return fs[i].GetPath() < fs[j].GetPath() })
}
