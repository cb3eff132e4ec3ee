package dataset

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/colinmarc/hdfs/v2"

	"github.com/newtricks/newtricks/internal/hdfsio"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// DirFS is a local directory tree; the dataset root passed to Build is then the directory's
// HDFS path (the index records it) and Local maps it to the local directory.
type DirFS struct {
	// Local is the local directory holding the dataset.
	Local string
}

// List implements FS.
func (d DirFS) List(_ context.Context, _ string) ([]FileInfo, error) {
	var out []FileInfo
	err := filepath.WalkDir(d.Local, func(p string, e fs.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() {
			return err
		}
		st, err := e.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(d.Local, p)
		if err != nil {
			return err
		}
		out = append(out, FileInfo{Path: filepath.ToSlash(rel), Length: st.Size(), MtimeMs: st.ModTime().UnixMilli()})
		return nil
	})
	return out, err
}

// Open implements FS.
func (d DirFS) Open(_ context.Context, _, rel string) (io.ReadCloser, error) {
	return os.Open(filepath.Join(d.Local, filepath.FromSlash(rel)))
}

// HDFSFS reads a dataset through an HDFS client (as that client's user).
type HDFSFS struct{ Client *hdfs.Client }

// List implements FS.
func (h HDFSFS) List(_ context.Context, root string) ([]FileInfo, error) {
	var out []FileInfo
	err := h.Client.Walk(root, func(p string, st os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if !st.Mode().IsRegular() {
			return nil
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, root), "/")
		out = append(out, FileInfo{Path: rel, Length: st.Size(), MtimeMs: st.ModTime().UnixMilli()})
		return nil
	})
	return out, err
}

// Open implements FS.
func (h HDFSFS) Open(_ context.Context, root, rel string) (io.ReadCloser, error) {
	return h.Client.Open(path.Join(root, rel))
}

// Store writes the index beside the shards as root/IndexName (through a temporary file and a
// rename, so readers never see half an index) and returns its SHA-256.
func Store(ctx context.Context, c *hdfs.Client, m *pb.DatasetIndex) ([]byte, error) {
	b, err := Marshal(m)
	if err != nil {
		return nil, err
	}
	final := path.Join(m.GetRoot(), IndexName)
	tmp := fmt.Sprintf("%s.tmp-%d", final, time.Now().UnixNano())
	w, err := c.Create(tmp)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", tmp, err)
	}
	if _, err := w.Write(b); err != nil {
		w.Close()
		c.Remove(tmp)
		return nil, fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := hdfsio.CloseFile(ctx, w); err != nil {
		c.Remove(tmp)
		return nil, fmt.Errorf("close %s: %w", tmp, err)
	}
	if err := c.Rename(tmp, final); err != nil {
		c.Remove(tmp)
		return nil, fmt.Errorf("rename %s: %w", tmp, err)
	}
	sum := sha256.Sum256(b)
	return sum[:], nil
}

// Load reads and validates root/IndexName through an HDFS client.
func Load(c *hdfs.Client, root string) (*Index, error) {
	p := path.Join(root, IndexName)
	f, err := c.Open(p)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", p, err)
	}
	defer f.Close()
	if f.Stat().Size() > MaxIndexBytes {
		return nil, fmt.Errorf("%w: %s is %d bytes, limit %d", ErrInvalid, p, f.Stat().Size(), MaxIndexBytes)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	ix, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	if ix.Root() != path.Clean(root) {
		return nil, fmt.Errorf("%w: %s was built for %s", ErrInvalid, p, ix.Root())
	}
	return ix, nil
}
