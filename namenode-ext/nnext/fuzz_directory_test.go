package nnext

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/newtricks/newtricks/internal/authn"
	"github.com/newtricks/newtricks/internal/coproc"
	"github.com/newtricks/newtricks/internal/fuzzcheck"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// FuzzDirectoryRequests decodes arbitrary bytes as each public DataNodeDirectory request
// (Register, List), as the gRPC edge would, and runs the real handlers over a report of two
// live DataNodes (dn-a at 10.0.0.1, dn-b at 10.0.0.2; the registrant user is newtricks) under
// each kind of caller: no interceptor, simple authentication from dn-a's address and from an
// address of no DataNode, Kerberos newtricks from dn-b's, Kerberos alice (not a registrant)
// from dn-a's, and a Kerberos identity without a user. Every answer is a status of a code a
// request may cause (never a panic, a non-status error, INTERNAL or UNKNOWN); a registration
// succeeds only for a live DataNode, from that DataNode's own address, by a registrant when
// the identity is proven, with a port in 1..65535; every listed address is the DataNode's IP
// from the report with its registered port, never a host a caller chose; the directory holds
// at most one entry per live DataNode.
func FuzzDirectoryRequests(f *testing.F) {
	fz := newDirectoryFuzz()
	for _, seed := range directorySeeds() {
		b, err := proto.Marshal(seed)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) { fz.check(t, fz.api, b) })
}

// fuzzT is what the checks need of a *testing.T (a fuzzcheck.Recorder in the Catches test).
type fuzzT = fuzzcheck.T

// directoryCaller is one kind of caller: who ActAs makes of the user a request names, and
// from where it calls.
type directoryCaller struct {
	name       string
	ctx        context.Context
	actAs      func(requested string) (user string, ok bool)
	identified bool   // the call carries an identity (simple authentication's counts)
	proven     bool   // a proven identity (then only registrants may register)
	from       string // the caller's IP
}

var directoryLive = map[string]string{"dn-a": "10.0.0.1", "dn-b": "10.0.0.2"} // UUID -> IP

type directoryFuzz struct {
	d       *directory
	api     pb.DataNodeDirectoryServer
	callers []directoryCaller
	ok      map[string]int // calls answered OK, by name
}

func newDirectoryFuzz() *directoryFuzz {
	h := &reportHost{}
	for uuid, ip := range directoryLive {
		h.live = append(h.live, &pb.DatanodeLoad{Uuid: uuid, Ip: ip, Hostname: uuid + ".example.com", XferAddr: ip + ":9866"})
	}
	d := newDirectory(h, 15*time.Second, registrantUsers([]string{"newtricks"}, "", nil), nil)
	bg := context.Background()
	ctx := func(id authn.Identity, addr string) context.Context { return authn.NewContext(bg, id, addr, nil) }
	simple := func(r string) (string, bool) { return r, r != "" }
	proven := func(user string) func(string) (string, bool) {
		return func(r string) (string, bool) { return user, r == "" || r == user }
	}
	none := func(string) (string, bool) { return "", false }
	return &directoryFuzz{d: d, api: d, ok: map[string]int{}, callers: []directoryCaller{
		{"no interceptor", bg, none, false, false, ""},
		{"simple from dn-a", ctx(authn.Identity{Method: authn.MethodSimple}, "10.0.0.1:50000"), simple, true, false, "10.0.0.1"},
		{"simple from elsewhere", ctx(authn.Identity{Method: authn.MethodSimple}, "10.9.9.9:50000"), simple, true, false, "10.9.9.9"},
		{"kerberos newtricks from dn-b", ctx(authn.Identity{User: "newtricks", Method: authn.MethodKerberos}, "[::ffff:10.0.0.2]:1"), proven("newtricks"), true, true, "10.0.0.2"},
		{"kerberos alice from dn-a", ctx(authn.Identity{User: "alice", Method: authn.MethodKerberos}, "10.0.0.1:1"), proven("alice"), true, true, "10.0.0.1"},
		{"kerberos without a user", ctx(authn.Identity{Method: authn.MethodKerberos}, "10.0.0.1:1"), none, false, true, "10.0.0.1"},
	}}
}

func directorySeeds() []proto.Message {
	return []proto.Message{
		&pb.RegisterDataNodeExtRequest{User: "hdfs", DatanodeUuid: "dn-a", ApiPort: 9890, Tls: true},
		&pb.RegisterDataNodeExtRequest{DatanodeUuid: "dn-b", ApiPort: 9890},
		&pb.RegisterDataNodeExtRequest{DatanodeUuid: "dn-a", ApiPort: 9890},
		&pb.RegisterDataNodeExtRequest{User: "newtricks", DatanodeUuid: "dn-b", ApiPort: 65535},
		&pb.RegisterDataNodeExtRequest{User: "hdfs", DatanodeUuid: "dn-a", ApiPort: 65536},
		&pb.RegisterDataNodeExtRequest{User: "hdfs", DatanodeUuid: "dn-x", ApiPort: 9890},
		&pb.RegisterDataNodeExtRequest{User: "hdfs", DatanodeUuid: "10.6.6.6:22", ApiPort: 22},
		&pb.RegisterDataNodeExtRequest{User: "hdfs", DatanodeUuid: strings.Repeat("a", 129), ApiPort: 1},
		&pb.ListDataNodeExtsRequest{User: "alice"},
		&pb.ListDataNodeExtsRequest{},
	}
}

// check runs one input through every call under every caller, from an empty directory.
func (fz *directoryFuzz) check(t fuzzT, api pb.DataNodeDirectoryServer, b []byte) {
	t.Helper()
	fz.d.mu.Lock()
	clear(fz.d.entries)
	fz.d.mu.Unlock()
	for _, c := range fz.callers {
		var reg pb.RegisterDataNodeExtRequest
		if proto.Unmarshal(b, &reg) == nil {
			resp, err := api.Register(c.ctx, &reg)
			fz.wantStatus(t, "Register", c, &reg, err)
			if err == nil {
				user, _ := c.actAs(reg.GetUser())
				ip, live := directoryLive[reg.GetDatanodeUuid()]
				switch {
				case !live || ip != c.from:
					t.Fatalf("caller %q from %s registered DataNode %q (at %q)", c.name, c.from, reg.GetDatanodeUuid(), ip)
				case c.proven && user != "newtricks":
					t.Fatalf("%s, not a registrant, registered %s", user, reg.GetDatanodeUuid())
				case reg.GetApiPort() < 1 || reg.GetApiPort() > 65535:
					t.Fatalf("registered port %d", reg.GetApiPort())
				}
				fz.wantAddress(t, "Register", resp.GetNode(), int(reg.GetApiPort()))
			}
		}
		var list pb.ListDataNodeExtsRequest
		if proto.Unmarshal(b, &list) == nil {
			resp, err := api.List(c.ctx, &list)
			fz.wantStatus(t, "List", c, &list, err)
			for _, n := range resp.GetNodes() {
				fz.wantAddress(t, "List", n, -1)
			}
		}
	}
	fz.d.mu.Lock()
	n := len(fz.d.entries)
	fz.d.mu.Unlock()
	if n > len(directoryLive) {
		t.Fatalf("%d directory entries for %d live DataNodes", n, len(directoryLive))
	}
}

// wantAddress fails unless an entry's address is its DataNode's IP with a port in 1..65535
// (port, if not -1).
func (fz *directoryFuzz) wantAddress(t fuzzT, call string, n *pb.DataNodeExt, port int) {
	t.Helper()
	host, p, err := net.SplitHostPort(n.GetApiAddress())
	pn, perr := strconv.Atoi(p)
	if err != nil || perr != nil || host != directoryLive[n.GetDatanodeUuid()] || pn < 1 || pn > 65535 || (port >= 0 && pn != port) {
		t.Fatalf("%s answered %s at %q", call, n.GetDatanodeUuid(), n.GetApiAddress())
	}
}

// wantStatus fails unless err is nil or a gRPC status error of a code a request may cause, and
// on a success for a caller without an identity.
func (fz *directoryFuzz) wantStatus(t fuzzT, call string, c directoryCaller, req proto.Message, err error) {
	t.Helper()
	s, ok := status.FromError(err)
	if !ok {
		t.Fatalf("%s(%v) from caller %q: error without a status: %v", call, req, c.name, err)
	}
	if code := s.Code(); code == codes.Unknown || code == codes.Internal {
		t.Fatalf("%s(%v) from caller %q: %v", call, req, c.name, err)
	}
	if err == nil {
		if !c.identified {
			t.Fatalf("%s(%v) succeeded for caller %q, who has no identity", call, req, c.name)
		}
		fz.ok[call]++
	}
}

// brokenDirectory is the directory with Register broken as a careless change could break it.
type brokenDirectory struct {
	*directory
	register func(d *directory, ctx context.Context, req *pb.RegisterDataNodeExtRequest) (*pb.RegisterDataNodeExtResponse, error)
}

func (b brokenDirectory) Register(ctx context.Context, req *pb.RegisterDataNodeExtRequest) (*pb.RegisterDataNodeExtResponse, error) {
	return b.register(b.directory, ctx, req)
}

// TestFuzzDirectoryCatches: the fuzz target's checks fail on Register broken in the ways they
// look for, and pass on the real one, with the seeds as inputs (which must reach a successful
// Register and List).
func TestFuzzDirectoryCatches(t *testing.T) {
	var seeds [][]byte
	for _, s := range directorySeeds() {
		b, _ := proto.Marshal(s)
		seeds = append(seeds, b)
	}
	// register stores an entry as the real Register does, with only the checks it is told.
	type checks struct{ from, port, registrant bool }
	register := func(d *directory, ctx context.Context, req *pb.RegisterDataNodeExtRequest, do checks) (*pb.RegisterDataNodeExtResponse, error) {
		user, err := authn.ActAs(ctx, req.GetUser())
		if err != nil {
			return nil, coproc.ToStatus(err)
		}
		c, _ := authn.FromContext(ctx)
		if do.registrant && c.Identity.Method != authn.MethodSimple && user != "newtricks" {
			return nil, status.Error(codes.PermissionDenied, "not a registrant")
		}
		if p := req.GetApiPort(); do.port && (p == 0 || p > 65535) {
			return nil, status.Error(codes.InvalidArgument, "port")
		}
		live, err := d.liveNodes(ctx, req.GetDatanodeUuid())
		if err != nil {
			return nil, coproc.ToStatus(err)
		}
		dn := live[req.GetDatanodeUuid()]
		if dn == nil {
			return nil, status.Error(codes.FailedPrecondition, "not live")
		}
		if do.from && !net.ParseIP(hostOf(c.RemoteAddr)).Equal(net.ParseIP(dn.GetIp())) {
			return nil, status.Error(codes.PermissionDenied, "not from there")
		}
		e := &dirEntry{port: int(req.GetApiPort()), at: d.now()}
		d.mu.Lock()
		d.entries[req.GetDatanodeUuid()] = e
		d.mu.Unlock()
		return &pb.RegisterDataNodeExtResponse{Node: entryProto(req.GetDatanodeUuid(), e, dn, d.now())}, nil
	}
	for _, tc := range []struct {
		name string
		api  func(d *directory) pb.DataNodeDirectoryServer
		want string
	}{
		{"the real directory", func(d *directory) pb.DataNodeDirectoryServer { return d }, ""},
		{"an error without a status", func(d *directory) pb.DataNodeDirectoryServer {
			return brokenDirectory{d, func(*directory, context.Context, *pb.RegisterDataNodeExtRequest) (*pb.RegisterDataNodeExtResponse, error) {
				return nil, errors.New("register: something went wrong")
			}}
		}, "error without a status"},
		{"any address registers", func(d *directory) pb.DataNodeDirectoryServer {
			return brokenDirectory{d, func(d *directory, ctx context.Context, req *pb.RegisterDataNodeExtRequest) (*pb.RegisterDataNodeExtResponse, error) {
				return register(d, ctx, req, checks{port: true, registrant: true})
			}}
		}, "registered DataNode"},
		{"any port", func(d *directory) pb.DataNodeDirectoryServer {
			return brokenDirectory{d, func(d *directory, ctx context.Context, req *pb.RegisterDataNodeExtRequest) (*pb.RegisterDataNodeExtResponse, error) {
				return register(d, ctx, req, checks{from: true, registrant: true})
			}}
		}, "registered port"},
		{"any proven user registers", func(d *directory) pb.DataNodeDirectoryServer {
			return brokenDirectory{d, func(d *directory, ctx context.Context, req *pb.RegisterDataNodeExtRequest) (*pb.RegisterDataNodeExtResponse, error) {
				return register(d, ctx, req, checks{from: true, port: true})
			}}
		}, "not a registrant"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fz := newDirectoryFuzz()
			api := tc.api(fz.d)
			var failures []string
			for _, b := range seeds {
				r := &fuzzcheck.Recorder{}
				if f := r.Run(func() { fz.check(r, api, b) }); f != "" {
					failures = append(failures, f)
				}
			}
			if tc.want == "" && (fz.ok["Register"] == 0 || fz.ok["List"] == 0) {
				t.Errorf("the seeds reach %d successful Registers, %d Lists", fz.ok["Register"], fz.ok["List"])
			}
			switch {
			case tc.want == "" && len(failures) > 0:
				t.Fatalf("the real directory fails the checks: %s", failures[0])
			case tc.want != "" && len(failures) == 0:
				t.Fatalf("no seed caught it")
			case tc.want != "" && !strings.Contains(failures[0], tc.want):
				t.Fatalf("caught as %q, want %q", failures[0], tc.want)
			}
		})
	}
}
