package hotspot

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	nnv1 "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// FakeHost is an in-memory NameNodeHostClient for unit tests only: a namespace with owners,
// factors, xattrs, quotas and instantly or manually placed replicas. Conformance tests run
// against a real NameNode.
type FakeHost struct {
	mu        sync.Mutex
	nodes     map[string]*fnode
	live      int
	xceivers  int32
	pending   int64
	safeMode  bool
	down      bool              // every call fails UNAVAILABLE
	failOps   map[string]error  // op -> error returned while set
	conf      map[string]string // reconfigurable properties
	calls     map[string]int
	setrepLog []string
	autoPlace bool // block locations follow the factor at once
	nextID    int64
	ids       map[int64]string
	balanced  []string

	failChanges      map[string]error // path -> error of its SetReplications change
	crashAfterMarker bool
	inspected        int
	blocksScanned    int
	xattrWrites      int
}

type fnode struct {
	id       int64
	dir      bool
	length   int64
	rep      int
	owner    string
	writers  map[string]bool // users that may write (besides owner)
	readable bool            // readable by everyone
	xattrs   map[string][]byte
	quota    int64 // space quota, -1 none
	placed   int   // replicas placed per block
	blocks   int
}

func NewFakeHost(live int) *FakeHost {
	h := &FakeHost{
		nodes:       map[string]*fnode{"/": {id: 16385, dir: true, quota: -1, readable: true, xattrs: map[string][]byte{}}},
		nextID:      16386,
		ids:         map[int64]string{},
		live:        live,
		failOps:     map[string]error{},
		failChanges: map[string]error{},
		calls:       map[string]int{},
		autoPlace:   false,
		conf: map[string]string{
			KeyMaxStreams: "2", KeyMaxStreamsHard: "4", KeyWorkMultiplier: "2",
		},
	}
	return h
}

func (h *FakeHost) Mkdir(p, owner string, quota int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.nodes[p] = &fnode{id: h.newID(), dir: true, owner: owner, quota: quota, readable: true, xattrs: map[string][]byte{}}
}

func (h *FakeHost) newID() int64 { h.nextID++; return h.nextID }

func (h *FakeHost) File(p, owner string, length int64, rep int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for d := path.Dir(p); ; d = path.Dir(d) {
		if h.nodes[d] == nil {
			h.nodes[d] = &fnode{id: h.newID(), dir: true, owner: owner, quota: -1, readable: true, xattrs: map[string][]byte{}}
		}
		if d == "/" {
			break
		}
	}
	h.ids[h.nextID+1] = p
	h.nodes[p] = &fnode{id: h.newID(), length: length, rep: rep, owner: owner, readable: true, placed: rep,
		blocks: int(max(1, (length+127)/128)), xattrs: map[string][]byte{}, quota: -1, writers: map[string]bool{}}
}

func (h *FakeHost) Rep(p string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.nodes[p].rep
}

func (h *FakeHost) XAttr(p, name string) ([]byte, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	v, ok := h.nodes[p].xattrs[name]
	return v, ok
}

func (h *FakeHost) XAttrNames(p string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for k := range h.nodes[p].xattrs {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// placeAll makes every file's placed replicas match its factor, as HDFS eventually does.
func (h *FakeHost) PlaceAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, n := range h.nodes {
		if !n.dir {
			n.placed = min(n.rep, h.live)
		}
	}
}

func (h *FakeHost) enter(op string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls[op]++
	if h.down {
		return status.Error(codes.Unavailable, "namenode host not connected")
	}
	if err := h.failOps[op]; err != nil {
		return err
	}
	return nil
}

func (h *FakeHost) lookup(p string) (*fnode, error) {
	n := h.nodes[h.resolve(p)]
	if n == nil {
		return nil, status.Errorf(codes.NotFound, "File does not exist: %s", p)
	}
	return n, nil
}

// resolve turns /.reserved/.inodes/<id> into the file's path, as the NameNode does.
func (h *FakeHost) resolve(p string) string {
	p = path.Clean(p)
	if rest, ok := strings.CutPrefix(p, "/.reserved/.inodes/"); ok {
		id, _ := strconv.ParseInt(rest, 10, 64)
		if q, ok := h.ids[id]; ok && h.nodes[q] != nil && h.nodes[q].id == id {
			return q
		}
		return ""
	}
	return p
}

func (h *FakeHost) statusOf(p string, n *fnode) *nnv1.FileStatus {
	return &nnv1.FileStatus{Path: p, Length: n.length, IsDir: n.dir, Replication: int32(n.rep),
		BlockSize: 128, Owner: n.owner, Permission: 0o644, FileId: n.id}
}

func (h *FakeHost) canRead(user string, n *fnode) bool {
	return user == "" || n.readable || user == n.owner
}

func (h *FakeHost) canWrite(user string, n *fnode) bool {
	return user == n.owner || n.writers[user]
}

// Who a call acts as, checked as the Java host does (host.proto): exactly one of a user and
// service; some calls are for one of them only.
const (
	userOrService = iota
	userOnly
	serviceOnly
)

func checkCaller(call, user string, service bool, mode int) error {
	switch {
	case user != "" && service:
		return status.Errorf(codes.InvalidArgument, "%s: names user %s and service", call, user)
	case user == "" && !service:
		return status.Errorf(codes.InvalidArgument, "%s: no user", call)
	case mode == userOnly && service:
		return status.Errorf(codes.PermissionDenied, "%s acts only for a user", call)
	case mode == serviceOnly && !service:
		return status.Errorf(codes.InvalidArgument, "%s is a service call", call)
	}
	return nil
}

func serviceXAttr(name string) error {
	if !strings.HasPrefix(name, "user.newtricks.") {
		return status.Errorf(codes.PermissionDenied, "service may not name xattr %q", name)
	}
	return nil
}

func (h *FakeHost) SetReplication(ctx context.Context, in *nnv1.SetReplicationRequest, _ ...grpc.CallOption) (*nnv1.SetReplicationResponse, error) {
	if err := h.enter("SetReplication"); err != nil {
		return nil, err
	}
	if err := checkCaller("SetReplication", in.User, in.Service, userOnly); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.safeMode {
		return nil, status.Error(codes.FailedPrecondition, "SafeModeException")
	}
	n, err := h.lookup(in.Path)
	if err != nil {
		return nil, err
	}
	if !h.canWrite(in.User, n) {
		return nil, status.Error(codes.PermissionDenied, "AccessControlException")
	}
	n.rep = int(in.Replication)
	if h.autoPlace {
		n.placed = min(n.rep, h.live)
	} else {
		n.placed = min(n.placed, n.rep)
	}
	h.setrepLog = append(h.setrepLog, fmt.Sprintf("%s=%d", in.Path, in.Replication))
	return &nnv1.SetReplicationResponse{Changed: true}, nil
}

func (h *FakeHost) GetFileStatus(ctx context.Context, in *nnv1.GetFileStatusRequest, _ ...grpc.CallOption) (*nnv1.FileStatus, error) {
	if err := h.enter("GetFileStatus"); err != nil {
		return nil, err
	}
	if err := checkCaller("GetFileStatus", in.User, in.Service, userOrService); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	n, err := h.lookup(in.Path)
	if err != nil {
		return nil, err
	}
	return h.statusOf(path.Clean(in.Path), n), nil
}

func (h *FakeHost) ListStatus(ctx context.Context, in *nnv1.ListStatusRequest, _ ...grpc.CallOption) (*nnv1.ListStatusResponse, error) {
	if err := h.enter("ListStatus"); err != nil {
		return nil, err
	}
	if err := checkCaller("ListStatus", in.User, in.Service, userOnly); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	dir := path.Clean(in.Path)
	n, err := h.lookup(dir)
	if err != nil {
		return nil, err
	}
	if !h.canRead(in.User, n) {
		return nil, status.Error(codes.PermissionDenied, "AccessControlException: list")
	}
	out := &nnv1.ListStatusResponse{}
	var names []string
	for p := range h.nodes {
		if p != "/" && path.Dir(p) == dir {
			names = append(names, p)
		}
	}
	sort.Strings(names)
	for _, p := range names {
		st := h.statusOf(p, h.nodes[p])
		st.Path = path.Base(p) // the host may answer bare names
		out.Entries = append(out.Entries, st)
	}
	return out, nil
}

func (h *FakeHost) GetDatanodeReport(ctx context.Context, in *nnv1.GetDatanodeReportRequest, _ ...grpc.CallOption) (*nnv1.DatanodeReport, error) {
	if err := h.enter("GetDatanodeReport"); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	rep := &nnv1.DatanodeReport{PendingReconstruction: h.pending, SafeMode: h.safeMode}
	for i := 0; i < h.live; i++ {
		rep.Live = append(rep.Live, &nnv1.DatanodeLoad{Uuid: strconv.Itoa(i), Xceivers: h.xceivers, AdminState: "NORMAL"})
	}
	return rep, nil
}

func (h *FakeHost) GetBlockLocations(ctx context.Context, in *nnv1.GetBlockLocationsRequest, _ ...grpc.CallOption) (*nnv1.LocatedBlocks, error) {
	if err := h.enter("GetBlockLocations"); err != nil {
		return nil, err
	}
	if err := checkCaller("GetBlockLocations", in.User, in.Service, userOrService); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	n, err := h.lookup(in.Path)
	if err != nil {
		return nil, err
	}
	out := &nnv1.LocatedBlocks{FileLength: n.length}
	for b := 0; b < n.blocks; b++ {
		lb := &nnv1.LocatedBlock{BlockId: int64(b)}
		for i := 0; i < n.placed; i++ {
			lb.Locations = append(lb.Locations, &nnv1.DatanodeRef{Uuid: strconv.Itoa(i)})
		}
		out.Blocks = append(out.Blocks, lb)
	}
	return out, nil
}

func (h *FakeHost) CheckAccess(ctx context.Context, in *nnv1.CheckAccessRequest, _ ...grpc.CallOption) (*nnv1.CheckAccessResponse, error) {
	if err := h.enter("CheckAccess"); err != nil {
		return nil, err
	}
	if err := checkCaller("CheckAccess", in.User, in.Service, userOnly); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(in.Paths) > 0 {
		out := &nnv1.CheckAccessResponse{}
		for _, p := range in.Paths {
			r := &nnv1.AccessResult{}
			n, err := h.lookup(p)
			switch {
			case err != nil:
				r.Code, r.Message = int32(codes.NotFound), err.Error()
			case in.Action == "WRITE" && !h.canWrite(in.User, n):
				r.Code, r.Message = int32(codes.PermissionDenied), fmt.Sprintf("Permission denied: user=%s, access=WRITE, inode=%q", in.User, p)
			}
			out.Results = append(out.Results, r)
		}
		return out, nil
	}
	n, err := h.lookup(in.Path)
	if err != nil {
		return nil, err
	}
	if in.Action == "WRITE" && !h.canWrite(in.User, n) {
		return nil, status.Errorf(codes.PermissionDenied, "Permission denied: user=%s, access=WRITE, inode=%q", in.User, in.Path)
	}
	return &nnv1.CheckAccessResponse{}, nil
}

func (h *FakeHost) GetContentSummary(ctx context.Context, in *nnv1.GetContentSummaryRequest, _ ...grpc.CallOption) (*nnv1.ContentSummary, error) {
	if err := h.enter("GetContentSummary"); err != nil {
		return nil, err
	}
	if err := checkCaller("GetContentSummary", in.User, in.Service, userOnly); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	dir := path.Clean(in.Path)
	n, err := h.lookup(dir)
	if err != nil {
		return nil, err
	}
	cs := &nnv1.ContentSummary{Quota: -1, SpaceQuota: n.quota}
	for p, c := range h.nodes {
		if !c.dir && (dir == "/" || strings.HasPrefix(p, dir+"/")) {
			cs.Length += c.length
			cs.SpaceConsumed += c.length * int64(c.rep)
			cs.FileCount++
		}
	}
	return cs, nil
}

func (h *FakeHost) GetXAttrs(ctx context.Context, in *nnv1.GetXAttrsRequest, _ ...grpc.CallOption) (*nnv1.GetXAttrsResponse, error) {
	if err := h.enter("GetXAttrs"); err != nil {
		return nil, err
	}
	if err := checkCaller("GetXAttrs", in.User, in.Service, userOrService); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	n, err := h.lookup(in.Path)
	if err != nil {
		return nil, err
	}
	out := &nnv1.GetXAttrsResponse{Xattrs: map[string][]byte{}}
	for k, v := range n.xattrs {
		if in.Service && serviceXAttr(k) != nil {
			continue
		}
		out.Xattrs[k] = append([]byte(nil), v...)
	}
	return out, nil
}

func (h *FakeHost) SetXAttr(ctx context.Context, in *nnv1.SetXAttrRequest, _ ...grpc.CallOption) (*nnv1.SetXAttrResponse, error) {
	if err := h.enter("SetXAttr"); err != nil {
		return nil, err
	}
	if err := checkCaller("SetXAttr", in.User, in.Service, userOrService); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	n, err := h.lookup(in.Path)
	if err != nil {
		return nil, err
	}
	if in.Service {
		if err := serviceXAttr(in.Name); err != nil {
			return nil, err
		}
	}
	if len(in.Name)+len(in.Value) > 16384 {
		return nil, status.Error(codes.InvalidArgument, "xattr too big")
	}
	n.xattrs[in.Name] = append([]byte(nil), in.Value...)
	return &nnv1.SetXAttrResponse{}, nil
}

func (h *FakeHost) RemoveXAttr(ctx context.Context, in *nnv1.RemoveXAttrRequest, _ ...grpc.CallOption) (*nnv1.RemoveXAttrResponse, error) {
	if err := h.enter("RemoveXAttr"); err != nil {
		return nil, err
	}
	if err := checkCaller("RemoveXAttr", in.User, in.Service, userOrService); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	n, err := h.lookup(in.Path)
	if err != nil {
		return nil, err
	}
	if in.Service {
		if err := serviceXAttr(in.Name); err != nil {
			return nil, err
		}
	}
	if _, ok := n.xattrs[in.Name]; !ok {
		return nil, status.Error(codes.InvalidArgument, "No matching attributes found for remove operation")
	}
	delete(n.xattrs, in.Name)
	return &nnv1.RemoveXAttrResponse{}, nil
}

func (h *FakeHost) Reconfigure(ctx context.Context, in *nnv1.ReconfigureRequest, _ ...grpc.CallOption) (*nnv1.ReconfigureResponse, error) {
	if err := h.enter("Reconfigure"); err != nil {
		return nil, err
	}
	if err := checkCaller("Reconfigure", "", in.Service, serviceOnly); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	old := h.conf[in.Key]
	h.conf[in.Key] = in.Value
	return &nnv1.ReconfigureResponse{OldValue: old}, nil
}

func (h *FakeHost) GetNamesystemState(ctx context.Context, in *nnv1.GetNamesystemStateRequest, _ ...grpc.CallOption) (*nnv1.NamesystemState, error) {
	if err := h.enter("GetNamesystemState"); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return &nnv1.NamesystemState{Active: true, SafeMode: h.safeMode, LiveDatanodes: int32(h.live), Superuser: "hdfs"}, nil
}

var _ nnv1.NameNodeHostClient = (*FakeHost)(nil)

// Test knobs.
func (h *FakeHost) SetDown(v bool)      { h.mu.Lock(); h.down = v; h.mu.Unlock() }
func (h *FakeHost) SetSafeMode(v bool)  { h.mu.Lock(); h.safeMode = v; h.mu.Unlock() }
func (h *FakeHost) SetAutoPlace(v bool) { h.mu.Lock(); h.autoPlace = v; h.mu.Unlock() }
func (h *FakeHost) SetLoad(xceivers int32, pending int64) {
	h.mu.Lock()
	h.xceivers, h.pending = xceivers, pending
	h.mu.Unlock()
}
func (h *FakeHost) Fail(op string, err error) {
	h.mu.Lock()
	if err == nil {
		delete(h.failOps, op)
	} else {
		h.failOps[op] = err
	}
	h.mu.Unlock()
}
func (h *FakeHost) Conf(key string) string { h.mu.Lock(); defer h.mu.Unlock(); return h.conf[key] }
func (h *FakeHost) Calls(op string) int    { h.mu.Lock(); defer h.mu.Unlock(); return h.calls[op] }
func (h *FakeHost) SetRep(p string, r int) { h.mu.Lock(); h.nodes[p].rep = r; h.mu.Unlock() }
func (h *FakeHost) Grant(p, user string)   { h.mu.Lock(); h.nodes[p].writers[user] = true; h.mu.Unlock() }
func (h *FakeHost) Hide(p string)          { h.mu.Lock(); h.nodes[p].readable = false; h.mu.Unlock() }
func (h *FakeHost) Delete(p string)        { h.mu.Lock(); delete(h.nodes, p); h.mu.Unlock() }

// Hooks into the Manager for tests that drive time and the background loop by hand.
func SetClock(m *Manager, now func() time.Time)     { m.now = now }
func Tick(m *Manager, ctx context.Context)          { m.tick(ctx) }
func Recover(m *Manager, ctx context.Context) error { return m.recover(ctx) }
func DrainImplicit(m *Manager, ctx context.Context) int {
	n := 0
	for {
		select {
		case p := <-m.implicit:
			m.createImplicit(ctx, p)
			n++
		default:
			return n
		}
	}
}

// GetQuotaUsage returns every ancestor with a space quota, consumption summed over files.
func (h *FakeHost) GetQuotaUsage(ctx context.Context, in *nnv1.GetQuotaUsageRequest, _ ...grpc.CallOption) (*nnv1.GetQuotaUsageResponse, error) {
	if err := h.enter("GetQuotaUsage"); err != nil {
		return nil, err
	}
	if err := checkCaller("GetQuotaUsage", "", in.Service, serviceOnly); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	out := &nnv1.GetQuotaUsageResponse{}
	seen := map[string]bool{}
	for _, p := range in.Paths {
		if h.nodes[path.Clean(p)] == nil {
			out.Missing = append(out.Missing, p)
			continue
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
				out.Dirs = append(out.Dirs, &nnv1.QuotaDir{Path: d, SpaceQuota: n.quota, SpaceConsumed: used, NsQuota: -1})
			}
			if d == "/" {
				break
			}
		}
	}
	return out, nil
}

// InspectFiles reports files by inode id with the fewest placed replicas from from_block on.
func (h *FakeHost) InspectFiles(ctx context.Context, in *nnv1.InspectFilesRequest, _ ...grpc.CallOption) (*nnv1.InspectFilesResponse, error) {
	if err := h.enter("InspectFiles"); err != nil {
		return nil, err
	}
	if err := checkCaller("InspectFiles", "", in.Service, serviceOnly); err != nil {
		return nil, err
	}
	if in.Xattr != "" {
		if err := serviceXAttr(in.Xattr); err != nil {
			return nil, err
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.inspected += len(in.FileIds)
	out := &nnv1.InspectFilesResponse{LiveDatanodes: int32(h.live)}
	for i, id := range in.FileIds {
		fi := &nnv1.FileInspection{FileId: id}
		out.Files = append(out.Files, fi)
		p := h.resolve(inodePathForTest(id))
		n := h.nodes[p]
		if n == nil || n.dir {
			continue
		}
		from := 0
		if len(in.FromBlock) > 0 {
			from = min(int(in.FromBlock[i]), n.blocks)
		}
		fi.Exists, fi.Path, fi.Replication, fi.Length, fi.Blocks, fi.BlockSize = true, p, int32(n.rep), n.length, int32(n.blocks), 128
		fi.MinLiveReplicas, fi.FirstShortBlock = -1, int32(n.blocks)
		if from < n.blocks {
			fi.MinLiveReplicas = int32(n.placed)
			h.blocksScanned += n.blocks - from
		}
		if len(in.Want) > 0 && from < n.blocks && n.placed < int(in.Want[i]) {
			fi.FirstShortBlock, fi.ShortBlocks = int32(from), int32(n.blocks-from)
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
func (h *FakeHost) SetReplications(ctx context.Context, in *nnv1.SetReplicationsRequest, _ ...grpc.CallOption) (*nnv1.SetReplicationsResponse, error) {
	if err := h.enter("SetReplications"); err != nil {
		return nil, err
	}
	if err := checkCaller("SetReplications", in.User, in.Service, userOrService); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	out := &nnv1.SetReplicationsResponse{}
	for _, c := range in.Changes {
		r := &nnv1.ReplicationResult{}
		out.Results = append(out.Results, r)
		if err := h.failChanges[h.resolve(c.Path)]; err != nil {
			r.Code, r.Message = int32(status.Code(err)), status.Convert(err).Message()
			continue
		}
		p := h.resolve(c.Path)
		n := h.nodes[p]
		if n == nil || n.dir {
			r.Code, r.Message = int32(codes.NotFound), "File does not exist: "+c.Path
			continue
		}
		if h.safeMode {
			r.Code, r.Message = int32(codes.FailedPrecondition), "SafeModeException"
			continue
		}
		if in.Service {
			// The service changes only files carrying its marker (host.proto).
			marker := c.SetXattr
			if marker == "" {
				marker = c.RemoveXattr
			}
			if err := serviceXAttr(marker); err != nil {
				r.Code, r.Message = int32(codes.PermissionDenied), err.Error()
				continue
			}
			if _, ok := n.xattrs[marker]; !ok {
				if c.Replication == 0 && c.SetXattr == "" {
					continue // removing an absent marker: nothing to do
				}
				r.Code, r.Message = int32(codes.PermissionDenied), "the service changes only files carrying its marker"
				continue
			}
		} else if !h.canWrite(in.User, n) {
			r.Code, r.Message = int32(codes.PermissionDenied), fmt.Sprintf("Permission denied: user=%s, access=WRITE", in.User)
			continue
		}
		r.Before = int32(n.rep)
		if c.Expect > 0 && int(c.Expect) != n.rep {
			r.Code, r.Message = int32(codes.Aborted), fmt.Sprintf("factor is %d, expected %d", n.rep, c.Expect)
			continue
		}
		if c.SetXattr != "" {
			n.xattrs[c.SetXattr] = append([]byte(nil), c.XattrValue...)
			h.xattrWrites++
		}
		if h.crashAfterMarker {
			h.crashAfterMarker = false
			r.Code, r.Message = int32(codes.Unavailable), "crashed after the marker"
			continue
		}
		if c.Replication > 0 && int(c.Replication) != n.rep {
			n.rep = int(c.Replication)
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

func (h *FakeHost) SetBalancedReads(ctx context.Context, in *nnv1.SetBalancedReadsRequest, _ ...grpc.CallOption) (*nnv1.SetBalancedReadsResponse, error) {
	if err := h.enter("SetBalancedReads"); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.balanced = append([]string(nil), in.Paths...)
	return &nnv1.SetBalancedReadsResponse{TopologyInstalled: true, Scope: "hinted", AuditHookInstalled: true}, nil
}

func inodePathForTest(id int64) string { return inodePath(id) }

// More test knobs.
func (h *FakeHost) Rename(from, to string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.nodes[to] = h.nodes[from]
	h.ids[h.nodes[to].id] = to
	delete(h.nodes, from)
}
func (h *FakeHost) FailChange(p string, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err == nil {
		delete(h.failChanges, p)
	} else {
		h.failChanges[p] = err
	}
}

// CrashAfterMarker makes the next change stop after writing its first marker, as a crash
// of the NameNode host call between the two would.
func (h *FakeHost) CrashAfterMarker() { h.mu.Lock(); h.crashAfterMarker = true; h.mu.Unlock() }
func (h *FakeHost) SetXAttrRaw(p, name string, v []byte) {
	h.mu.Lock()
	h.nodes[p].xattrs[name] = v
	h.mu.Unlock()
}
func (h *FakeHost) Balanced() []string  { h.mu.Lock(); defer h.mu.Unlock(); return h.balanced }
func (h *FakeHost) Placed(p string) int { h.mu.Lock(); defer h.mu.Unlock(); return h.nodes[p].placed }
func (h *FakeHost) SetPlaced(p string, n int) {
	h.mu.Lock()
	h.nodes[p].placed = n
	h.mu.Unlock()
}
func (h *FakeHost) Counters() (inspected, scanned, xattrWrites int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.inspected, h.blocksScanned, h.xattrWrites
}
