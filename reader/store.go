package reader

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/colinmarc/hdfs/v2"

	"github.com/newtricks/newtricks/internal/nsclient"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// Store reads plain HDFS bytes as the reader's user: the dataset indexes and, on fallback,
// samples.
type Store interface {
	ReadAt(ctx context.Context, path string, off, n int64) ([]byte, error)
	Size(ctx context.Context, path string) (int64, error)
}

// Locator returns a file's blocks (the reader needs their replica holders: ownership is
// computed on them) from namenode-ext's Namespace.Locate.
type Locator interface {
	Locate(ctx context.Context, path string) (*pb.LocatedBlocks, error)
}

// BatchLocator is a Locator that locates many files in few calls (Namespace.LocateBatch);
// the reader uses it when its Locator has it.
type BatchLocator interface {
	LocateMany(ctx context.Context, paths []string) ([]*pb.LocatedBlocks, error)
}

// HDFSStore reads through a colinmarc/hdfs client, keeping files open (a FileReader is not
// safe for concurrent use: each has its own lock).
type HDFSStore struct {
	Client *hdfs.Client
	mu     sync.Mutex
	open   map[string]*openFile
}

type openFile struct {
	mu sync.Mutex
	f  *hdfs.FileReader
}

func (s *HDFSStore) file(path string) (*openFile, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open == nil {
		s.open = map[string]*openFile{}
	}
	if f, ok := s.open[path]; ok {
		return f, nil
	}
	f, err := s.Client.Open(path)
	if err != nil {
		return nil, err
	}
	of := &openFile{f: f}
	s.open[path] = of
	return of, nil
}

// ReadAt implements Store.
func (s *HDFSStore) ReadAt(_ context.Context, path string, off, n int64) ([]byte, error) {
	of, err := s.file(path)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, n)
	of.mu.Lock()
	_, err = of.f.ReadAt(buf, off)
	of.mu.Unlock()
	if err != nil && !(err == io.EOF && n == 0) {
		// A DataNode may have gone away: open afresh next time.
		s.mu.Lock()
		if s.open[path] == of {
			delete(s.open, path)
			of.f.Close()
		}
		s.mu.Unlock()
		return nil, fmt.Errorf("read %s [%d, +%d): %w", path, off, n, err)
	}
	return buf, nil
}

// Size implements Store.
func (s *HDFSStore) Size(_ context.Context, path string) (int64, error) {
	st, err := s.Client.Stat(path)
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// Close closes the open files.
func (s *HDFSStore) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.open {
		f.f.Close()
	}
	s.open = nil
}

// NamespaceLocator locates through namenode-ext as User. For an HA nameservice make Client
// over apiclient.DialAll of every NameNode's namenode-ext: the calls go to the active one and
// fail over (BUILDING.md, "Clients of a nameservice").
type NamespaceLocator struct {
	Client pb.NamespaceClient
	User   string
}

// Locate implements Locator.
func (l NamespaceLocator) Locate(ctx context.Context, path string) (*pb.LocatedBlocks, error) {
	return l.Client.Locate(ctx, &pb.LocateRequest{Path: path, User: l.User})
}

// LocateMany implements BatchLocator.
func (l NamespaceLocator) LocateMany(ctx context.Context, paths []string) ([]*pb.LocatedBlocks, error) {
	return nsclient.LocateMany(ctx, l.Client, l.User, paths)
}
