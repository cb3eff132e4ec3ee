package nnhosttest

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/newtricks/newtricks/namenode-ext/nnhost"
)

// The host calls, as nnhost.Client offers them. Each counts in Calls under its method name and
// fails while SetDown or Fail says so.

// GetFileStatus stats p as who.
func (h *FakeHost) GetFileStatus(ctx context.Context, p string, who nnhost.Caller) (*nnhost.FileStatus, error) {
	if err := h.enter("GetFileStatus"); err != nil {
		return nil, err
	}
	if err := checkCaller("GetFileStatus", who, userOrService); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	n, err := h.lookup(p)
	if err != nil {
		return nil, err
	}
	return h.statusOf(path.Clean(p), n), nil
}

// ListStatus returns one page of dir as who (user only), as the Java host does: at most
// limit entries, never more than the host's bound (SetListBound, default 1000), after the local
// name after; entries hold bare names, as the host may answer.
func (h *FakeHost) ListStatus(ctx context.Context, dir string, after []byte, limit int, who nnhost.Caller) (nnhost.ListPage, error) {
	if err := h.enter("ListStatus"); err != nil {
		return nnhost.ListPage{}, err
	}
	if err := checkCaller("ListStatus", who, userOnly); err != nil {
		return nnhost.ListPage{}, err
	}
	if limit < 0 {
		return nnhost.ListPage{}, status.Error(codes.InvalidArgument, "ListStatus: negative limit")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	dir = path.Clean(dir)
	n, err := h.lookup(dir)
	if err != nil {
		return nnhost.ListPage{}, err
	}
	if !h.canRead(who.User, n) {
		return nnhost.ListPage{}, status.Error(codes.PermissionDenied, "AccessControlException: list")
	}
	bound := h.listBound
	if bound <= 0 {
		bound = 1000
	}
	if limit == 0 || limit > bound {
		limit = bound
	}
	var names []string
	for p := range h.nodes {
		if p != "/" && path.Dir(p) == dir && path.Base(p) > string(after) {
			names = append(names, p)
		}
	}
	sort.Strings(names)
	out := nnhost.ListPage{Entries: []*nnhost.FileStatus{}}
	if len(names) > limit {
		names, out.HasMore = names[:limit], true
	}
	for _, p := range names {
		st := h.statusOf(p, h.nodes[p])
		st.Path = path.Base(p) // the host may answer bare names
		out.Entries = append(out.Entries, st)
		out.LastName = []byte(st.Path)
	}
	return out, nil
}

// GetDatanodeReport reports the live DataNodes, each with the load SetLoad gave.
func (h *FakeHost) GetDatanodeReport(ctx context.Context) (nnhost.DatanodeReport, error) {
	if err := h.enter("GetDatanodeReport"); err != nil {
		return nnhost.DatanodeReport{}, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	rep := nnhost.DatanodeReport{PendingReconstruction: h.pending}
	for i := 0; i < h.live; i++ {
		rep.Live = append(rep.Live, nnhost.DatanodeLoad{UUID: strconv.Itoa(i), Xceivers: int(h.xceivers),
			Capacity: h.capacity, Remaining: h.remaining, AdminState: "NORMAL"})
	}
	return rep, nil
}

// GetBlockLocations returns p's blocks with their placed replicas. As HDFS does, a user needs
// read access, and a directory is not a file (NOT_FOUND).
func (h *FakeHost) GetBlockLocations(ctx context.Context, p string, length int64, who nnhost.Caller) (nnhost.LocatedBlocks, error) {
	if err := h.enter("GetBlockLocations"); err != nil {
		return nnhost.LocatedBlocks{}, err
	}
	if err := checkCaller("GetBlockLocations", who, userOrService); err != nil {
		return nnhost.LocatedBlocks{}, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	n, err := h.lookup(p)
	if err != nil {
		return nnhost.LocatedBlocks{}, err
	}
	if n.dir {
		return nnhost.LocatedBlocks{}, status.Errorf(codes.NotFound, "Path is not a file: %s", p)
	}
	if !who.Service && !h.canRead(who.User, n) {
		return nnhost.LocatedBlocks{}, status.Errorf(codes.PermissionDenied, "Permission denied: user=%s, access=READ, inode=%q", who.User, p)
	}
	out := nnhost.LocatedBlocks{FileLength: n.length, UnderConstruction: n.open}
	for b := 0; b < n.blocks; b++ {
		lb := nnhost.LocatedBlock{BlockID: int64(b)}
		for i := 0; i < n.placed; i++ {
			lb.Locations = append(lb.Locations, strconv.Itoa(i))
		}
		out.Blocks = append(out.Blocks, lb)
	}
	return out, nil
}

// CheckAccess checks action on every path as who (user only): the owner and those granted
// may write.
func (h *FakeHost) CheckAccess(ctx context.Context, paths []string, action string, who nnhost.Caller) ([]nnhost.AccessResult, error) {
	if err := h.enter("CheckAccess"); err != nil {
		return nil, err
	}
	if err := checkCaller("CheckAccess", who, userOnly); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	out := []nnhost.AccessResult{}
	for _, p := range paths {
		var r nnhost.AccessResult
		n, err := h.lookup(p)
		switch {
		case err != nil:
			r.Code, r.Message = codes.NotFound, err.Error()
		case action == "WRITE" && !h.canWrite(who.User, n):
			r.Code, r.Message = codes.PermissionDenied, fmt.Sprintf("Permission denied: user=%s, access=WRITE, inode=%q", who.User, p)
		}
		out = append(out, r)
	}
	return out, nil
}

// GetXAttrs returns p's xattrs as who; the service sees only its own prefix.
func (h *FakeHost) GetXAttrs(ctx context.Context, p string, who nnhost.Caller) (map[string][]byte, error) {
	if err := h.enter("GetXAttrs"); err != nil {
		return nil, err
	}
	if err := checkCaller("GetXAttrs", who, userOrService); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	n, err := h.lookup(p)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for k, v := range n.xattrs {
		if who.Service && serviceXAttr(k) != nil {
			continue
		}
		out[k] = append([]byte(nil), v...)
	}
	return out, nil
}

// SetXAttr sets one xattr of p as who, within the NameNode's default size limit.
func (h *FakeHost) SetXAttr(ctx context.Context, p, name string, value []byte, who nnhost.Caller) error {
	if err := h.enter("SetXAttr"); err != nil {
		return err
	}
	if err := checkCaller("SetXAttr", who, userOrService); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	n, err := h.lookup(p)
	if err != nil {
		return err
	}
	if who.Service {
		if err := serviceXAttr(name); err != nil {
			return err
		}
	}
	if len(name)+len(value) > 16384 {
		return status.Error(codes.InvalidArgument, "xattr too big")
	}
	n.xattrs[name] = append([]byte(nil), value...)
	return nil
}

// RemoveXAttr removes one xattr of p as who; an absent one is INVALID_ARGUMENT, as in HDFS.
func (h *FakeHost) RemoveXAttr(ctx context.Context, p, name string, who nnhost.Caller) error {
	if err := h.enter("RemoveXAttr"); err != nil {
		return err
	}
	if err := checkCaller("RemoveXAttr", who, userOrService); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	n, err := h.lookup(p)
	if err != nil {
		return err
	}
	if who.Service {
		if err := serviceXAttr(name); err != nil {
			return err
		}
	}
	if _, ok := n.xattrs[name]; !ok {
		return status.Error(codes.InvalidArgument, "No matching attributes found for remove operation")
	}
	delete(n.xattrs, name)
	return nil
}

// Reconfigure sets a NameNode property and returns the value it replaced.
func (h *FakeHost) Reconfigure(ctx context.Context, key, value string) (string, error) {
	if err := h.enter("Reconfigure"); err != nil {
		return "", err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	old := h.conf[key]
	h.conf[key] = value
	return old, nil
}

// GetNamesystemState reports an active NameNode (in safe mode while SetSafeMode says so) with
// superuser "hdfs".
func (h *FakeHost) GetNamesystemState(ctx context.Context) (nnhost.NamesystemState, error) {
	if err := h.enter("GetNamesystemState"); err != nil {
		return nnhost.NamesystemState{}, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return nnhost.NamesystemState{Active: true, SafeMode: h.safeMode, LiveDatanodes: h.live, Superuser: "hdfs"}, nil
}

// GetQuotaUsage returns every ancestor with a space quota, consumption summed over files.
func (h *FakeHost) GetQuotaUsage(ctx context.Context, paths []string) ([]nnhost.QuotaDir, error) {
	if err := h.enter("GetQuotaUsage"); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	out := []nnhost.QuotaDir{}
	seen := map[string]bool{}
	for _, p := range paths {
		if h.nodes[path.Clean(p)] == nil {
			continue // missing
		}
		for d := path.Dir(path.Clean(p)); ; d = path.Dir(d) {
			if n := h.nodes[d]; n != nil && n.quota >= 0 && !seen[d] {
				seen[d] = true
				used := int64(0)
				for q, c := range h.nodes {
					if !c.dir && (d == "/" || strings.HasPrefix(q, d+"/")) {
						used += c.length * int64(c.rep)
					}
				}
				out = append(out, nnhost.QuotaDir{Path: d, SpaceQuota: n.quota, SpaceConsumed: used})
			}
			if d == "/" {
				break
			}
		}
	}
	return out, nil
}

// InspectFiles reports files by inode id with the fewest placed replicas from FromBlock on.
func (h *FakeHost) InspectFiles(ctx context.Context, in nnhost.InspectRequest) ([]nnhost.FileInspection, error) {
	if err := h.enter("InspectFiles"); err != nil {
		return nil, err
	}
	if in.Xattr != "" {
		if err := serviceXAttr(in.Xattr); err != nil {
			return nil, err
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.inspected += len(in.FileIDs)
	out := make([]nnhost.FileInspection, len(in.FileIDs))
	for i, id := range in.FileIDs {
		fi := &out[i]
		fi.FileID = id
		p := h.resolve(nnhost.InodePath(id))
		n := h.nodes[p]
		if n == nil || n.dir {
			continue
		}
		from := 0
		if len(in.FromBlock) > 0 {
			from = min(in.FromBlock[i], n.blocks)
		}
		fi.Exists, fi.Path, fi.Replication, fi.Length, fi.Blocks = true, p, n.rep, n.length, n.blocks
		fi.MinLiveReplicas, fi.FirstShortBlock = -1, n.blocks
		if from < n.blocks {
			fi.MinLiveReplicas = n.placed
			h.blocksScanned += n.blocks - from
		}
		if len(in.Want) > 0 && from < n.blocks && n.placed < in.Want[i] {
			fi.FirstShortBlock = from
		}
		if in.Holders {
			for k := 0; k < n.placed; k++ {
				fi.Holders = append(fi.Holders, strconv.Itoa(k))
			}
		}
		if in.Xattr != "" {
			if v, ok := n.xattrs[in.Xattr]; ok {
				fi.HasXattr, fi.Xattr = true, append([]byte(nil), v...)
			}
		}
	}
	return out, nil
}

// SetReplications applies each change as the Java host does: the condition, the xattr before,
// the factor, the xattr after, the removal.
func (h *FakeHost) SetReplications(ctx context.Context, changes []nnhost.ReplicationChange, who nnhost.Caller) ([]nnhost.ReplicationResult, error) {
	if err := h.enter("SetReplications"); err != nil {
		return nil, err
	}
	if err := checkCaller("SetReplications", who, userOrService); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]nnhost.ReplicationResult, len(changes))
	for i, c := range changes {
		r := &out[i]
		if err := h.failChanges[h.resolve(c.Path)]; err != nil {
			r.Code, r.Message = status.Code(err), status.Convert(err).Message()
			continue
		}
		p := h.resolve(c.Path)
		n := h.nodes[p]
		if n == nil || n.dir {
			r.Code, r.Message = codes.NotFound, "File does not exist: "+c.Path
			continue
		}
		if h.safeMode {
			r.Code, r.Message = codes.FailedPrecondition, "SafeModeException"
			continue
		}
		if who.Service {
			// The service changes only files carrying its marker (host.proto).
			marker := c.SetXattr
			if marker == "" {
				marker = c.RemoveXattr
			}
			if err := serviceXAttr(marker); err != nil {
				r.Code, r.Message = codes.PermissionDenied, err.Error()
				continue
			}
			if _, ok := n.xattrs[marker]; !ok {
				if c.Replication == 0 && c.SetXattr == "" {
					continue // removing an absent marker: nothing to do
				}
				r.Code, r.Message = codes.PermissionDenied, "the service changes only files carrying its marker"
				continue
			}
		} else if !h.canWrite(who.User, n) {
			r.Code, r.Message = codes.PermissionDenied, fmt.Sprintf("Permission denied: user=%s, access=WRITE", who.User)
			continue
		}
		r.Before = n.rep
		if c.Expect > 0 && c.Expect != n.rep {
			r.Code, r.Message = codes.Aborted, fmt.Sprintf("factor is %d, expected %d", n.rep, c.Expect)
			continue
		}
		if c.SetXattr != "" {
			n.xattrs[c.SetXattr] = append([]byte(nil), c.XattrValue...)
			h.xattrWrites++
		}
		if h.crashAfterMarker {
			h.crashAfterMarker = false
			r.Code, r.Message = codes.Unavailable, "crashed after the marker"
			continue
		}
		if c.Replication > 0 && c.Replication != n.rep {
			n.rep = c.Replication
			if h.autoPlace {
				n.placed = min(n.rep, h.live)
			} else {
				n.placed = min(n.placed, n.rep)
			}
			h.setrepLog = append(h.setrepLog, fmt.Sprintf("%s=%d", p, c.Replication))
			r.Changed = true
		}
		if c.SetXattr != "" && len(c.FinalXattrValue) > 0 {
			n.xattrs[c.SetXattr] = append([]byte(nil), c.FinalXattrValue...)
			h.xattrWrites++
		}
		if c.RemoveXattr != "" {
			delete(n.xattrs, c.RemoveXattr)
		}
	}
	return out, nil
}

// SetBalancedReads records the paths (Balanced) and reports the topology installed.
func (h *FakeHost) SetBalancedReads(ctx context.Context, paths []string) (bool, error) {
	if err := h.enter("SetBalancedReads"); err != nil {
		return false, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.balanced = append([]string(nil), paths...)
	return true, nil
}
