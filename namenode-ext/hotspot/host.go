package hotspot

import (
	"context"

	"github.com/newtricks/newtricks/namenode-ext/nnhost"
)

// Host is what the manager asks of the NameNode: the calls of the hook's host service it
// makes, in nnhost's types (nnhost.Client in namenode-ext, nnhosttest.FakeHost in tests).
// Errors are the host's gRPC status errors; hostCode and hostRetryable classify them.
type Host interface {
	GetNamesystemState(ctx context.Context) (nnhost.NamesystemState, error)
	GetDatanodeReport(ctx context.Context) (nnhost.DatanodeReport, error)
	GetFileStatus(ctx context.Context, path string, who nnhost.Caller) (*nnhost.FileStatus, error)
	ListStatus(ctx context.Context, dir string, after []byte, limit int, who nnhost.Caller) (nnhost.ListPage, error)
	CheckAccess(ctx context.Context, paths []string, action string, who nnhost.Caller) ([]nnhost.AccessResult, error)
	GetQuotaUsage(ctx context.Context, paths []string) ([]nnhost.QuotaDir, error)
	InspectFiles(ctx context.Context, req nnhost.InspectRequest) ([]nnhost.FileInspection, error)
	SetReplications(ctx context.Context, changes []nnhost.ReplicationChange, who nnhost.Caller) ([]nnhost.ReplicationResult, error)
	GetXAttrs(ctx context.Context, path string, who nnhost.Caller) (map[string][]byte, error)
	SetXAttr(ctx context.Context, path, name string, value []byte, who nnhost.Caller) error
	RemoveXAttr(ctx context.Context, path, name string, who nnhost.Caller) error
	Reconfigure(ctx context.Context, key, value string) (old string, err error)
	SetBalancedReads(ctx context.Context, paths []string) (topologyInstalled bool, err error)
}

var _ Host = (*nnhost.Client)(nil)
