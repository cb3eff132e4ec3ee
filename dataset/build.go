package dataset

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"time"

	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
	ximage "github.com/newtricks/newtricks/xformgraph/image"
	"github.com/newtricks/newtricks/xformgraph/video"
)

// FileInfo is one regular file of a dataset directory.
type FileInfo struct {
	// Path relative to the dataset root, slash-separated.
	Path    string
	Length  int64
	MtimeMs int64
}

// FS is the file system a dataset lives in: HDFS (HDFSFS) or a local directory (DirFS, for
// tests and for indexing before an upload).
type FS interface {
	// List returns every regular file below root (recursively).
	List(ctx context.Context, root string) ([]FileInfo, error)
	// Open opens root/rel for sequential reading.
	Open(ctx context.Context, root, rel string) (io.ReadCloser, error)
}

// BuildOptions tune Build.
type BuildOptions struct {
	// Progress, if set, is called after every file with the files and bytes done so far and
	// the totals.
	Progress func(files, totalFiles int, bytes, totalBytes int64)
	// MaxSampleBytes bounds one sample (default 1 GiB): a larger member is an error.
	MaxSampleBytes int64
	// Now stamps DatasetIndex.created_ms (default time.Now).
	Now func() time.Time
}

// Media extensions (of a member name's last part). A tar key with at least one media member is
// a sample; its other members (labels, captions, metadata: "cls", "json", "txt") are indexed
// with it and travel to the trainer raw.
var mediaExt = map[string]pb.DatasetMedia{
	"jpg": pb.DatasetMedia_DATASET_MEDIA_JPEG, "jpeg": pb.DatasetMedia_DATASET_MEDIA_JPEG,
	"png":  pb.DatasetMedia_DATASET_MEDIA_PNG,
	"webp": pb.DatasetMedia_DATASET_MEDIA_WEBP,
	"mp4":  pb.DatasetMedia_DATASET_MEDIA_VIDEO, "mkv": pb.DatasetMedia_DATASET_MEDIA_VIDEO,
	"webm": pb.DatasetMedia_DATASET_MEDIA_VIDEO, "mov": pb.DatasetMedia_DATASET_MEDIA_VIDEO,
	"avi": pb.DatasetMedia_DATASET_MEDIA_VIDEO,
}

// Skipped reports whether a file of the dataset directory is not data: the index itself and
// anything whose base name starts with "_" or ".".
func Skipped(rel string) bool {
	b := path.Base(rel)
	return strings.HasPrefix(b, "_") || strings.HasPrefix(b, ".")
}

// Build indexes the dataset directory root (absolute) of fsys. It reads every file once,
// sequentially. Files whose media cannot be probed are indexed with cost 1 (the transform
// reports the error for that sample only); a malformed tar, a duplicate key, a key whose
// members are not consecutive in its tar (WebDataset would read them as two samples) or that
// has a member twice, more than MaxMembers members or a bad member name fails the build. A key
// without a media member is not a sample.
func Build(ctx context.Context, fsys FS, root string, o BuildOptions) (*pb.DatasetIndex, error) {
	if !path.IsAbs(root) {
		return nil, fmt.Errorf("%w: dataset root %q is not absolute", ErrInvalid, root)
	}
	root = path.Clean(root)
	if o.MaxSampleBytes == 0 {
		o.MaxSampleBytes = 1 << 30
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	all, err := fsys.List(ctx, root)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", root, err)
	}
	var files []FileInfo
	var total int64
	for _, f := range all {
		if Skipped(f.Path) {
			continue
		}
		if _, ok := mediaOf(f.Path); !ok && !strings.HasSuffix(f.Path, ".tar") {
			continue
		}
		files = append(files, f)
		total += f.Length
	}
	m := &pb.DatasetIndex{Version: Version, Root: root, CreatedMs: o.Now().UnixMilli()}
	for _, f := range files {
		m.Files = append(m.Files, &pb.DatasetFile{Path: f.Path, Length: f.Length, MtimeMs: f.MtimeMs, Tar: strings.HasSuffix(f.Path, ".tar")})
	}
	sortFiles(m.Files)
	var done int64
	seen := map[string]string{}
	for i, f := range m.Files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var ss []*pb.DatasetSample
		if f.GetTar() {
			ss, err = indexTar(ctx, fsys, root, f.GetPath(), o.MaxSampleBytes)
		} else {
			ss, err = indexFile(ctx, fsys, root, f, o.MaxSampleBytes)
		}
		if err != nil {
			return nil, err
		}
		for _, s := range ss {
			if prev, dup := seen[s.Key]; dup {
				return nil, fmt.Errorf("%w: key %q is in %s and %s", ErrInvalid, s.Key, prev, f.GetPath())
			}
			seen[s.Key] = f.GetPath()
			s.File = uint32(i)
			m.Samples = append(m.Samples, s)
		}
		done += f.GetLength()
		if o.Progress != nil {
			o.Progress(i+1, len(m.Files), done, total)
		}
	}
	if len(m.Samples) == 0 {
		return nil, fmt.Errorf("%w: no samples under %s (want *.tar shards or media files)", ErrInvalid, root)
	}
	if _, err := FromProto(m); err != nil {
		return nil, err
	}
	return m, nil
}

func mediaOf(name string) (pb.DatasetMedia, bool) {
	ext := strings.ToLower(path.Ext(name))
	if ext == "" {
		return 0, false
	}
	md, ok := mediaExt[ext[1:]]
	return md, ok
}

// splitKey splits a tar member name into its WebDataset key (directory kept, base name up to
// the first dot) and extension (after the first dot).
func splitKey(name string) (key, ext string) {
	dir, base := path.Split(name)
	if i := strings.IndexByte(base, '.'); i >= 0 {
		return dir + base[:i], base[i+1:]
	}
	return dir + base, ""
}

// countingReader counts the bytes tar.Reader consumed: right after Next returns a header, the
// count is the offset of the member's data in the tar (tar.Reader reads whole 512-byte blocks
// and never ahead of the header it returns).
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func indexTar(ctx context.Context, fsys FS, root, rel string, maxBytes int64) ([]*pb.DatasetSample, error) {
	rc, err := fsys.Open(ctx, root, rel)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", rel, err)
	}
	defer rc.Close()
	cr := &countingReader{r: rc}
	tr := tar.NewReader(cr)
	var out []*pb.DatasetSample
	done := map[string]bool{} // keys whose members ended (WebDataset groups consecutive members)
	var cur *pb.DatasetSample // the key being read
	var costs int64           // of cur's media members
	finish := func() error {
		if cur == nil {
			return nil
		}
		s := cur
		cur, done[s.Key] = nil, true
		if s.Media == pb.DatasetMedia_DATASET_MEDIA_UNKNOWN {
			return nil // no media member: not a sample (as before members were indexed)
		}
		first, last := s.Members[0], s.Members[len(s.Members)-1]
		s.Offset, s.Length = first.Offset, last.Offset+last.Length-first.Offset
		if s.Length > maxBytes {
			return fmt.Errorf("%w: tar %s: sample %s has %d bytes, limit %d", ErrInvalid, rel, s.Key, s.Length, maxBytes)
		}
		s.Cost = max(costs, 1)
		out = append(out, s)
		return nil
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out, finish()
		}
		if err != nil {
			return nil, fmt.Errorf("%w: tar %s: %v", ErrInvalid, rel, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		key, ext := splitKey(h.Name)
		if cur == nil || cur.Key != key {
			if err := finish(); err != nil {
				return nil, err
			}
			if done[key] {
				return nil, fmt.Errorf("%w: tar %s: the members of key %q are not consecutive (%s)", ErrInvalid, rel, key, h.Name)
			}
			cur, costs = &pb.DatasetSample{Key: key}, 0
		}
		if err := checkMemberName(ext); err != nil {
			return nil, fmt.Errorf("%w: tar %s: member %s: %v", ErrInvalid, rel, h.Name, err)
		}
		for _, o := range cur.Members {
			if o.Name == ext {
				return nil, fmt.Errorf("%w: tar %s: member %s appears twice", ErrInvalid, rel, h.Name)
			}
		}
		if len(cur.Members) == MaxMembers {
			return nil, fmt.Errorf("%w: tar %s: key %q has more than %d members", ErrInvalid, rel, key, MaxMembers)
		}
		if h.Size > maxBytes {
			return nil, fmt.Errorf("%w: tar %s: member %s has %d bytes, limit %d", ErrInvalid, rel, h.Name, h.Size, maxBytes)
		}
		md := mediaExt[strings.ToLower(lastExt(ext))]
		mb := &pb.DatasetMember{Name: ext, Offset: cr.n, Length: h.Size, Media: md}
		cur.Members = append(cur.Members, mb)
		if md == pb.DatasetMedia_DATASET_MEDIA_UNKNOWN {
			continue // tar.Reader skips its data on the next Next
		}
		data := make([]byte, h.Size)
		if _, err := io.ReadFull(tr, data); err != nil {
			return nil, fmt.Errorf("%w: tar %s: member %s: %v", ErrInvalid, rel, h.Name, err)
		}
		g := &pb.DatasetSample{Key: key, Media: md}
		probe(ctx, g, data)
		costs += g.Cost
		if cur.Media == pb.DatasetMedia_DATASET_MEDIA_UNKNOWN { // the primary: first media member
			cur.Media, cur.Width, cur.Height, cur.Frames = md, g.Width, g.Height, g.Frames
		}
	}
}

func lastExt(ext string) string {
	if i := strings.LastIndexByte(ext, '.'); i >= 0 {
		return ext[i+1:]
	}
	return ext
}

func indexFile(ctx context.Context, fsys FS, root string, f *pb.DatasetFile, maxBytes int64) ([]*pb.DatasetSample, error) {
	md, _ := mediaOf(f.GetPath())
	if f.GetLength() > maxBytes {
		return nil, fmt.Errorf("%w: %s has %d bytes, limit %d", ErrInvalid, f.GetPath(), f.GetLength(), maxBytes)
	}
	rc, err := fsys.Open(ctx, root, f.GetPath())
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", f.GetPath(), err)
	}
	defer rc.Close()
	data := make([]byte, f.GetLength())
	if _, err := io.ReadFull(rc, data); err != nil {
		return nil, fmt.Errorf("%w: read %s: %v", ErrStale, f.GetPath(), err)
	}
	key := strings.TrimSuffix(f.GetPath(), path.Ext(f.GetPath()))
	s := &pb.DatasetSample{Key: key, Offset: 0, Length: f.GetLength(), Media: md,
		Members: []*pb.DatasetMember{{Name: path.Ext(f.GetPath())[1:], Offset: 0, Length: f.GetLength(), Media: md}}}
	probe(ctx, s, data)
	return []*pb.DatasetSample{s}, nil
}

// probe fills the geometry and cost from the media header; cost stays 1 when it cannot.
func probe(ctx context.Context, s *pb.DatasetSample, data []byte) {
	s.Cost = 1
	switch s.Media {
	case pb.DatasetMedia_DATASET_MEDIA_VIDEO:
		r, err := video.OpenBytes(ctx, s.Key, data, video.Options{})
		if err != nil {
			return
		}
		defer r.Close()
		st := r.Stream()
		s.Width, s.Height, s.Frames = uint32(st.Width), uint32(st.Height), uint32(r.Index().NumFrames())
	default:
		info, err := ximage.Probe(data)
		if err != nil {
			return
		}
		s.Width, s.Height, s.Frames = uint32(info.Width), uint32(info.Height), 1
	}
	if c := int64(s.Width) * int64(s.Height) * int64(s.Frames); c > 0 {
		s.Cost = c
	}
}
