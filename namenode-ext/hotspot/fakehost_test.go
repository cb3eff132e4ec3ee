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
}

type fnode struct {
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
		nodes:     map[string]*fnode{"/": {dir: true, quota: -1, readable: true, xattrs: map[string][]byte{}}},
		live:      live,
		failOps:   map[string]error{},
		calls:     map[string]int{},
		autoPlace: false,
		conf: map[string]string{
			KeyMaxStreams: "2", KeyMaxStreamsHard: "4", KeyWorkMultiplier: "2",
		},
	}
	return h
}

func (h *FakeHost) Mkdir(p, owner string, quota int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.nodes[p] = &fnode{dir: true, owner: owner, quota: quota, readable: true, xattrs: map[string][]byte{}}
}

func (h *FakeHost) File(p, owner string, length int64, rep int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for d := path.Dir(p); ; d = path.Dir(d) {
		if h.nodes[d] == nil {
			h.nodes[d] = &fnode{dir: true, owner: owner, quota: -1, readable: true, xattrs: map[string][]byte{}}
		}
		if d == "/" {
			break
		}
	}
	h.nodes[p] = &fnode{length: length, rep: rep, owner: owner, readable: true, placed: rep,
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
	n := h.nodes[path.Clean(p)]
	if n == nil {
		return nil, status.Errorf(codes.NotFound, "File does not exist: %s", p)
	}
	return n, nil
}

func (h *FakeHost) statusOf(p string, n *fnode) *nnv1.FileStatus {
	return &nnv1.FileStatus{Path: p, Length: n.length, IsDir: n.dir, Replication: int32(n.rep),
		BlockSize: 128, Owner: n.owner, Permission: 0o644}
}

func (h *FakeHost) canRead(user string, n *fnode) bool {
	return user == "" || n.readable || user == n.owner
}

func (h *FakeHost) SetReplication(ctx context.Context, in *nnv1.SetReplicationRequest, _ ...grpc.CallOption) (*nnv1.SetReplicationResponse, error) {
	if err := h.enter("SetReplication"); err != nil {
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
	if in.User != "" && in.User != n.owner && !n.writers[in.User] {
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
	h.mu.Lock()
	defer h.mu.Unlock()
	n, err := h.lookup(in.Path)
	if err != nil {
		return nil, err
	}
	if in.Action == "WRITE" && in.User != "" && in.User != n.owner && !n.writers[in.User] {
		return nil, status.Errorf(codes.PermissionDenied, "Permission denied: user=%s, access=WRITE, inode=%q", in.User, in.Path)
	}
	return &nnv1.CheckAccessResponse{}, nil
}

func (h *FakeHost) GetContentSummary(ctx context.Context, in *nnv1.GetContentSummaryRequest, _ ...grpc.CallOption) (*nnv1.ContentSummary, error) {
	if err := h.enter("GetContentSummary"); err != nil {
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
	h.mu.Lock()
	defer h.mu.Unlock()
	n, err := h.lookup(in.Path)
	if err != nil {
		return nil, err
	}
	out := &nnv1.GetXAttrsResponse{Xattrs: map[string][]byte{}}
	for k, v := range n.xattrs {
		out.Xattrs[k] = append([]byte(nil), v...)
	}
	return out, nil
}

func (h *FakeHost) SetXAttr(ctx context.Context, in *nnv1.SetXAttrRequest, _ ...grpc.CallOption) (*nnv1.SetXAttrResponse, error) {
	if err := h.enter("SetXAttr"); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	n, err := h.lookup(in.Path)
	if err != nil {
		return nil, err
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
	h.mu.Lock()
	defer h.mu.Unlock()
	n, err := h.lookup(in.Path)
	if err != nil {
		return nil, err
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

// The batched hotspot calls; the manager does not use them yet.
func (h *FakeHost) GetQuotaUsage(ctx context.Context, in *nnv1.GetQuotaUsageRequest, _ ...grpc.CallOption) (*nnv1.GetQuotaUsageResponse, error) {
	return nil, status.Error(codes.Unimplemented, "GetQuotaUsage")
}
func (h *FakeHost) InspectFiles(ctx context.Context, in *nnv1.InspectFilesRequest, _ ...grpc.CallOption) (*nnv1.InspectFilesResponse, error) {
	return nil, status.Error(codes.Unimplemented, "InspectFiles")
}
func (h *FakeHost) SetReplications(ctx context.Context, in *nnv1.SetReplicationsRequest, _ ...grpc.CallOption) (*nnv1.SetReplicationsResponse, error) {
	return nil, status.Error(codes.Unimplemented, "SetReplications")
}
func (h *FakeHost) SetBalancedReads(ctx context.Context, in *nnv1.SetBalancedReadsRequest, _ ...grpc.CallOption) (*nnv1.SetBalancedReadsResponse, error) {
	return nil, status.Error(codes.Unimplemented, "SetBalancedReads")
}
