// Package nnhosttest is the NameNode host service for unit tests: FakeHost, one in-memory
// namespace that hotspot's, mirror's and nnext's tests share. It speaks nnhost's types, so it
// satisfies the host interfaces of hotspot and mirror directly, and Register serves it over
// gRPC for code that dials the hook's socket. Conformance tests run against a real NameNode.
package nnhosttest

import (
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/newtricks/newtricks/namenode-ext/nnhost"
)

// FakeHost is an in-memory NameNode host service for unit tests only: a namespace with owners,
// factors, xattrs, quotas and instantly or manually placed replicas. It checks who a call acts
// as the way the Java host does (host.proto), so a caller mistake fails a unit test.
type FakeHost struct {
	mu        sync.Mutex
	nodes     map[string]*fnode
	live      int
	xceivers  int32
	pending   int64
	capacity  int64 // every DataNode's; 0: unknown (hotspot then ignores free space)
	remaining int64
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
	listBound int // entries per ListStatus page (0: 1000, the Java host's default)

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
	open     bool   // under construction
	perm     uint32 // permission bits reported (0: 0644)
}

// Keys of the NameNode's re-replication limits, with the values a fresh FakeHost reports
// (Reconfigure returns and replaces them). They are HDFS's names, not the hotspot package's,
// so that hotspot's own tests can use this package.
const (
	keyMaxStreams      = "dfs.namenode.replication.max-streams"
	keyMaxStreamsHard  = "dfs.namenode.replication.max-streams-hard-limit"
	keyWorkMultiplier  = "dfs.namenode.replication.work.multiplier.per.iteration"
	inodePrefix        = "/.reserved/.inodes/"
	defaultBlockSize   = 128
	serviceXAttrPrefix = "user.newtricks."
)

// NewFakeHost returns a namespace holding only "/", on a cluster of live DataNodes.
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
			keyMaxStreams: "2", keyMaxStreamsHard: "4", keyWorkMultiplier: "2",
		},
	}
	return h
}

// Mkdir adds directory p (not its parents) owned by owner, with a space quota (-1: none).
func (h *FakeHost) Mkdir(p, owner string, quota int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.nodes[p] = &fnode{id: h.newID(), dir: true, owner: owner, quota: quota, readable: true, xattrs: map[string][]byte{}}
}

func (h *FakeHost) newID() int64 { h.nextID++; return h.nextID }

// File adds file p (and its missing parents) owned by owner, of length bytes in blocks of 128,
// with factor rep and rep replicas placed.
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

// Rep returns p's factor.
func (h *FakeHost) Rep(p string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.nodes[p].rep
}

// XAttr returns one xattr of p.
func (h *FakeHost) XAttr(p, name string) ([]byte, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	v, ok := h.nodes[p].xattrs[name]
	return v, ok
}

// XAttrNames returns the names of p's xattrs, sorted.
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

// PlaceAll makes every file's placed replicas match its factor, as HDFS eventually does.
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
	if rest, ok := strings.CutPrefix(p, inodePrefix); ok {
		id, _ := strconv.ParseInt(rest, 10, 64)
		if q, ok := h.ids[id]; ok && h.nodes[q] != nil && h.nodes[q].id == id {
			return q
		}
		return ""
	}
	return p
}

// statusOf is n's status; its mtime is derived from its inode id, so it is fixed per node.
func (h *FakeHost) statusOf(p string, n *fnode) *nnhost.FileStatus {
	return &nnhost.FileStatus{Path: p, Length: n.length, IsDir: n.dir, Replication: n.rep,
		BlockSize: defaultBlockSize, MtimeMs: 1_767_225_600_000 + n.id, Owner: n.owner, Group: "supergroup",
		Permission: permOf(n), FileID: n.id}
}

func permOf(n *fnode) uint32 {
	if n.perm == 0 {
		return 0o644
	}
	return n.perm
}

// SetPerm sets the permission bits p reports (nothing else follows from them).
func (h *FakeHost) SetPerm(p string, perm uint32) { h.mu.Lock(); h.nodes[p].perm = perm; h.mu.Unlock() }

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

func checkCaller(call string, who nnhost.Caller, mode int) error {
	switch {
	case who.User != "" && who.Service:
		return status.Errorf(codes.InvalidArgument, "%s: names user %s and service", call, who.User)
	case who.User == "" && !who.Service:
		return status.Errorf(codes.InvalidArgument, "%s: no user", call)
	case mode == userOnly && who.Service:
		return status.Errorf(codes.PermissionDenied, "%s acts only for a user", call)
	case mode == serviceOnly && !who.Service:
		return status.Errorf(codes.InvalidArgument, "%s is a service call", call)
	}
	return nil
}

func serviceXAttr(name string) error {
	if !strings.HasPrefix(name, serviceXAttrPrefix) {
		return status.Errorf(codes.PermissionDenied, "service may not name xattr %q", name)
	}
	return nil
}

// Test knobs.

// SetDown makes every call fail UNAVAILABLE (the hook not connected) while v.
func (h *FakeHost) SetDown(v bool) { h.mu.Lock(); h.down = v; h.mu.Unlock() }

// SetListBound sets the host's bound on the entries of one ListStatus page.
func (h *FakeHost) SetListBound(n int) { h.mu.Lock(); h.listBound = n; h.mu.Unlock() }

// SetSafeMode puts the NameNode in safe mode (changes fail FAILED_PRECONDITION) while v.
func (h *FakeHost) SetSafeMode(v bool) { h.mu.Lock(); h.safeMode = v; h.mu.Unlock() }

// SetAutoPlace makes the placed replicas follow every factor change at once while v.
func (h *FakeHost) SetAutoPlace(v bool) { h.mu.Lock(); h.autoPlace = v; h.mu.Unlock() }

// SetLoad sets every DataNode's xceiver count and the pending reconstruction blocks.
func (h *FakeHost) SetLoad(xceivers int32, pending int64) {
	h.mu.Lock()
	h.xceivers, h.pending = xceivers, pending
	h.mu.Unlock()
}

// SetSpace sets every DataNode's capacity and remaining bytes (0, 0 by default: unknown).
func (h *FakeHost) SetSpace(capacity, remaining int64) {
	h.mu.Lock()
	h.capacity, h.remaining = capacity, remaining
	h.mu.Unlock()
}

// SetOpen marks file p as being written (under construction) while v.
func (h *FakeHost) SetOpen(p string, v bool) { h.mu.Lock(); h.nodes[p].open = v; h.mu.Unlock() }

// Fail makes every call of op (a method name, "SetXAttr") return err; nil clears it.
func (h *FakeHost) Fail(op string, err error) {
	h.mu.Lock()
	if err == nil {
		delete(h.failOps, op)
	} else {
		h.failOps[op] = err
	}
	h.mu.Unlock()
}

// Conf returns a reconfigurable NameNode property.
func (h *FakeHost) Conf(key string) string { h.mu.Lock(); defer h.mu.Unlock(); return h.conf[key] }

// Calls counts the calls of op (a method name) so far.
func (h *FakeHost) Calls(op string) int { h.mu.Lock(); defer h.mu.Unlock(); return h.calls[op] }

// SetRep changes p's factor as someone else would.
func (h *FakeHost) SetRep(p string, r int) { h.mu.Lock(); h.nodes[p].rep = r; h.mu.Unlock() }

// Grant lets user write p.
func (h *FakeHost) Grant(p, user string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := h.nodes[p]
	if n.writers == nil {
		n.writers = map[string]bool{}
	}
	n.writers[user] = true
}

// Hide makes p readable by its owner only.
func (h *FakeHost) Hide(p string) { h.mu.Lock(); h.nodes[p].readable = false; h.mu.Unlock() }

// Delete removes p.
func (h *FakeHost) Delete(p string) { h.mu.Lock(); delete(h.nodes, p); h.mu.Unlock() }

// Rename moves p to a new path; its inode id follows it.
func (h *FakeHost) Rename(from, to string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.nodes[to] = h.nodes[from]
	h.ids[h.nodes[to].id] = to
	delete(h.nodes, from)
}

// FailChange makes the SetReplications changes of p fail with err's code; nil clears it.
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

// SetXAttrRaw sets an xattr of p as someone else would (no caller checks).
func (h *FakeHost) SetXAttrRaw(p, name string, v []byte) {
	h.mu.Lock()
	h.nodes[p].xattrs[name] = v
	h.mu.Unlock()
}

// Balanced returns the paths of the last SetBalancedReads.
func (h *FakeHost) Balanced() []string { h.mu.Lock(); defer h.mu.Unlock(); return h.balanced }

// Placed returns the replicas placed per block of p.
func (h *FakeHost) Placed(p string) int { h.mu.Lock(); defer h.mu.Unlock(); return h.nodes[p].placed }

// SetPlaced sets the replicas placed per block of p.
func (h *FakeHost) SetPlaced(p string, n int) {
	h.mu.Lock()
	h.nodes[p].placed = n
	h.mu.Unlock()
}

// Counters returns the files InspectFiles looked at, the blocks it scanned and the marker
// writes of SetReplications so far.
func (h *FakeHost) Counters() (inspected, scanned, xattrWrites int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.inspected, h.blocksScanned, h.xattrWrites
}
