package mirror

import (
	"context"

	"github.com/newtricks/newtricks/namenode-ext/nnhost"
)

// Host is what the mirror asks of dc-a's NameNode through the hook's host service, always as
// the service (metadata only: a checkpoint directory's owner and attributes, whether a file is
// still open, the superuser), except CheckAccess, asked as an API caller: nnhost.Client in namenode-ext, nnhosttest.FakeHost in tests. The
// bytes themselves are read with HDFS clients as the checkpoint's owner.
type Host interface {
	GetNamesystemState(ctx context.Context) (nnhost.NamesystemState, error)
	GetFileStatus(ctx context.Context, path string, who nnhost.Caller) (*nnhost.FileStatus, error)
	GetBlockLocations(ctx context.Context, path string, length int64, who nnhost.Caller) (nnhost.LocatedBlocks, error)
	// CheckAccess as the caller of Urgent and Complete: may it write the checkpoint's directory?
	CheckAccess(ctx context.Context, paths []string, action string, who nnhost.Caller) ([]nnhost.AccessResult, error)
}

var _ Host = (*nnhost.Client)(nil)
