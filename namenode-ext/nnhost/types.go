// Package nnhost is namenode-ext's view of the NameNode hook's host service (NameNodeHost in
// proto/newtricks/v1/host.proto) in namenode-ext's own types. The subsystems (hotspot, mirror)
// each declare the few calls they make as a small interface of these types; Client is the one
// adapter over the generated gRPC client, and the only place where namenode-ext's domain code
// meets the generated protobuf of that service. Tests use nnhosttest.FakeHost instead.
//
// The types carry the fields the subsystems use, not every field of the wire messages: a
// field is added here (and in Client's conversion) when a subsystem starts to need it.
//
// Errors are the host's gRPC status errors, passed on unchanged, so callers classify them by
// code (status.Code) as host.proto documents them: NOT_FOUND, PERMISSION_DENIED,
// FAILED_PRECONDITION (safe mode, standby), RESOURCE_EXHAUSTED (quota), UNAVAILABLE (not
// ready)... The per-item results of the batched calls carry their code the same way.
package nnhost

import (
	"strconv"

	"google.golang.org/grpc/codes"
)

// Caller says whom a call acts as (host.proto, "no confused deputy"): a named user, with that
// user's rights, or the co-process itself for its own bookkeeping, within the host's per-call
// limits. The zero Caller names nobody and is refused by the host, never run as the daemon.
// Calls the host allows only for the service (GetQuotaUsage, InspectFiles, Reconfigure) take
// no Caller.
type Caller struct {
	User    string
	Service bool
}

// AsService is the co-process acting on its own behalf.
var AsService = Caller{Service: true}

// AsUser acts as user u, with u's rights.
func AsUser(u string) Caller { return Caller{User: u} }

// InodePath is the path of a file by inode id (/.reserved/.inodes/<id>), valid across
// renames.
func InodePath(id int64) string { return "/.reserved/.inodes/" + strconv.FormatInt(id, 10) }

// NamesystemState is the NameNode's HA and safe-mode state and its superuser.
type NamesystemState struct {
	Active        bool
	SafeMode      bool
	LiveDatanodes int
	Superuser     string
}

// FileStatus is one file or directory (HdfsFileStatus).
type FileStatus struct {
	// Path is absolute for GetFileStatus; a ListStatus entry may hold the bare name.
	Path        string
	Length      int64
	IsDir       bool
	Replication int
	BlockSize   int64
	MtimeMs     int64
	Owner       string
	Group       string
	Permission  uint32 // HDFS permission bits (FsPermission.toShort), e.g. 0o644
	FileID      int64  // inode id
}

// ListPage is one page of a directory listing (ListStatus).
type ListPage struct {
	Entries []*FileStatus
	// HasMore: the directory has entries after this page; ask again after LastName.
	HasMore bool
	// LastName is the local name of the page's last entry (empty for an empty page).
	LastName []byte
}

// DatanodeReport is the live DataNodes and the NameNode's replication backlog.
type DatanodeReport struct {
	Live []DatanodeLoad
	// PendingReconstruction is FSNamesystem.getPendingReconstructionBlocks().
	PendingReconstruction int64
	// UnderReplicated is FSNamesystem.getLowRedundancyBlocks().
	UnderReplicated int64
}

// DatanodeLoad is one live DataNode.
type DatanodeLoad struct {
	UUID       string
	Xceivers   int // DatanodeInfo.getXceiverCount()
	Capacity   int64
	Remaining  int64
	AdminState string // "NORMAL", "DECOMMISSION_INPROGRESS", ...
}

// LocatedBlocks is a file's blocks and where their replicas are.
type LocatedBlocks struct {
	FileLength        int64
	UnderConstruction bool
	Blocks            []LocatedBlock
}

// LocatedBlock is one block and the DataNodes (by uuid) holding it.
type LocatedBlock struct {
	BlockID   int64
	Locations []string
}

// AccessResult is the outcome of ClientProtocol.checkAccess for one path: codes.OK if allowed.
type AccessResult struct {
	Code    codes.Code
	Message string
}

// QuotaDir is an ancestor directory with a quota, read from the inode tree.
type QuotaDir struct {
	Path          string
	SpaceQuota    int64 // raw bytes (all replicas); -1 if none
	SpaceConsumed int64
}

// InspectRequest asks for files by inode id (service only).
type InspectRequest struct {
	FileIDs []int64
	// Xattr, if set, is also returned for every file (a name under the service prefixes).
	Xattr string
	// Want and FromBlock (parallel to FileIDs, optional) are for readiness: the live replicas
	// wanted and the first block to look at, so a poll costs the blocks still short.
	Want      []int
	FromBlock []int
	// Holders also returns the DataNodes holding the scanned blocks.
	Holders bool
}

// FileInspection is one file of InspectFiles, in request order.
type FileInspection struct {
	FileID      int64
	Exists      bool   // false: deleted (or not a file)
	Path        string // current full path (follows renames)
	Replication int
	Length      int64
	Blocks      int
	// MinLiveReplicas is the fewest live replicas over the scanned blocks; -1 with none.
	MinLiveReplicas int
	// FirstShortBlock (with Want) is the first block from FromBlock on with fewer live
	// replicas than wanted, or Blocks if none.
	FirstShortBlock int
	HasXattr        bool
	Xattr           []byte
	Holders         []string // DataNode uuids with a live replica of a scanned block
}

// ReplicationChange is one change of SetReplications: the factor, optionally conditional on
// the factor found, with an xattr written before and removed after.
type ReplicationChange struct {
	Path        string // may be InodePath(id)
	Replication int    // 0: leave the factor alone
	Expect      int    // > 0: change only if the factor is this now
	SetXattr    string // written before the factor changes
	XattrValue  []byte
	RemoveXattr string // removed after the factor changed (absent is fine)
	// FinalXattrValue, if set, is written to SetXattr again after the factor changed, so a
	// record of a change in flight (XattrValue) is replaced by the settled one.
	FinalXattrValue []byte
}

// ReplicationResult is the outcome of one ReplicationChange, in request order.
type ReplicationResult struct {
	Code    codes.Code // OK, NOT_FOUND, ABORTED (factor is not Expect), FAILED_PRECONDITION...
	Message string
	Before  int // factor found (0 if unknown)
	Changed bool
}
