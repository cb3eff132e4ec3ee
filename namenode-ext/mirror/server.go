package mirror

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/newtricks/newtricks/internal/authn"
	"github.com/newtricks/newtricks/internal/coproc"
	"github.com/newtricks/newtricks/namenode-ext/nnhost"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// RegisterGRPC registers the Mirror service on s (namenode-ext's public API server).
func (e *Engine) RegisterGRPC(s *grpc.Server) { pb.RegisterMirrorServer(s, e.GRPCServer()) }

// GRPCServer is the Mirror service of e, for a caller that registers it itself (namenode-ext
// switches it with its NameNode's active terms).
func (e *Engine) GRPCServer() pb.MirrorServer { return &server{e: e} }

// server is the thin gRPC shim: resolve the user, call, convert, map errors.
type server struct {
	pb.UnimplementedMirrorServer
	e *Engine
}

// caller resolves the acting user and whether it is an HDFS administrator.
func (s *server) caller(ctx context.Context, requested string) (string, bool, error) {
	user, err := authn.ActAs(ctx, requested)
	if err != nil {
		return "", false, err
	}
	if _, err := authn.RequireAdmin(ctx, user); err == nil {
		return user, true, nil
	}
	s.e.mu.Lock()
	su := s.e.superuser
	s.e.mu.Unlock()
	return user, su != "" && user == su, nil
}

func (s *server) Status(ctx context.Context, req *pb.MirrorStatusRequest) (*pb.MirrorStatusResponse, error) {
	user, admin, err := s.caller(ctx, req.GetUser())
	if err != nil {
		return nil, coproc.ToStatus(err)
	}
	return s.e.status(user, admin, req.GetRule(), req.GetJob()), nil
}

func (s *server) Urgent(ctx context.Context, req *pb.MirrorUrgentRequest) (*pb.CheckpointStatus, error) {
	user, admin, err := s.caller(ctx, req.GetUser())
	if err != nil {
		return nil, coproc.ToStatus(err)
	}
	st, err := s.e.Urgent(ctx, refOf(req.GetRef()), user, admin)
	return st, s.e.toStatus(err)
}

func (s *server) Complete(ctx context.Context, req *pb.MirrorCompleteRequest) (*pb.CheckpointStatus, error) {
	user, admin, err := s.caller(ctx, req.GetUser())
	if err != nil {
		return nil, coproc.ToStatus(err)
	}
	st, err := s.e.Complete(ctx, refOf(req.GetRef()), user, admin)
	return st, s.e.toStatus(err)
}

func (s *server) Wait(req *pb.MirrorWaitRequest, stream pb.Mirror_WaitServer) error {
	ctx := stream.Context()
	user, admin, err := s.caller(ctx, req.GetUser())
	if err != nil {
		return coproc.ToStatus(err)
	}
	interval := time.Duration(req.GetIntervalMs()) * time.Millisecond
	if interval <= 0 {
		interval = 500 * time.Millisecond
	}
	interval = min(max(interval, 20*time.Millisecond), time.Minute)
	leave, err := s.e.enterWait(user)
	if err != nil {
		return s.e.toStatus(err)
	}
	defer leave()
	return s.e.toStatus(s.e.Wait(ctx, refOf(req.GetRef()), user, admin, interval, stream.Send))
}

// toStatus maps an API error to its gRPC status, counting refusals (access, bounds).
func (e *Engine) toStatus(err error) error {
	st := coproc.ToStatus(err)
	if c := status.Code(st); c == codes.PermissionDenied || c == codes.ResourceExhausted {
		e.metrics.refused.Inc()
	}
	return st
}

func refOf(r *pb.CheckpointRef) Key {
	return Key{Rule: r.GetRule(), Job: r.GetJob(), Step: r.GetStep()}
}

// find returns the checkpoint a ref names (e.mu held); rule may be empty.
func (e *Engine) findLocked(k Key) (*checkpoint, error) {
	if err := checkKey(k); err != nil {
		return nil, err
	}
	if k.Rule != "" && e.rule(k.Rule) == nil {
		return nil, fmt.Errorf("%w %q", ErrUnknownRule, k.Rule)
	}
	for _, r := range e.cfg.Rules {
		if k.Rule != "" && r.Name != k.Rule {
			continue
		}
		if c := e.ckpts[Key{Rule: r.Name, Job: k.Job, Step: k.Step}]; c != nil {
			return c, nil
		}
	}
	return nil, fmt.Errorf("%w: %s/%d", ErrNotFound, k.Job, k.Step)
}

// allowed says whether user may see c (Status, Wait): its owner or an administrator. A
// checkpoint whose owner is not known yet is nobody's but the administrators'.
func (e *Engine) allowed(c *checkpoint, user string, admin bool) error {
	if admin || (c.owner != "" && c.owner == user) {
		return nil
	}
	if c.owner == "" {
		return fmt.Errorf("%w: %s: owner not known yet", ErrPermission, c.key)
	}
	return fmt.Errorf("%w: %s is %s's", ErrPermission, c.key, c.owner)
}

// Urgent moves a checkpoint to the front; one not seen yet is urgent from its first file.
// The caller must be able to write the checkpoint's directory (for one not seen yet, its
// nearest existing ancestor now, and the directory itself once it appears); marks for
// checkpoints not seen yet are bounded per user and in total and expire.
func (e *Engine) Urgent(ctx context.Context, k Key, user string, admin bool) (*pb.CheckpointStatus, error) {
	if err := checkKey(k); err != nil {
		return nil, err
	}
	e.mu.Lock()
	if !e.recovered {
		e.mu.Unlock()
		return nil, ErrRecovering
	}
	c, err := e.findLocked(k)
	var dir string
	if c != nil {
		dir = c.srcDir
	} else {
		if k.Rule == "" && len(e.cfg.Rules) == 1 {
			k.Rule = e.cfg.Rules[0].Name
		}
		r := e.rule(k.Rule)
		if k.Rule == "" || r == nil {
			e.mu.Unlock()
			return nil, err
		}
		dir = expand(r.Source, k.Job, fmt.Sprint(k.Step))
	}
	e.mu.Unlock()
	if !admin {
		check := e.mayWrite
		if c == nil {
			check = e.mayWriteNearest
		}
		if err := check(ctx, dir, user); err != nil {
			return nil, err
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if c == nil {
		if c2, _ := e.findLocked(k); c2 != nil {
			c = c2 // seen meanwhile; its owner is checked when it is resolved, or now below
		}
	}
	now := e.now()
	e.expireUrgentLocked(now)
	if c == nil {
		if _, ok := e.urgentSoon[k]; !ok {
			if len(e.urgentSoon) >= e.cfg.UrgentMaxPending {
				return nil, fmt.Errorf("%w: %d urgent marks for checkpoints not seen yet, at most %d (newtricks.mirror.urgent.max-pending)",
					coproc.ErrResourceLimit, len(e.urgentSoon), e.cfg.UrgentMaxPending)
			}
			if !admin && e.urgentCountLocked(user) >= e.cfg.UrgentPerUser {
				return nil, fmt.Errorf("%w: %s has %d urgent marks, at most %d (newtricks.mirror.urgent.per-user)",
					ErrUserLimit, user, e.urgentCountLocked(user), e.cfg.UrgentPerUser)
			}
		}
		e.urgentSoon[k] = pendingUrgent{user: user, admin: admin, at: now}
		return &pb.CheckpointStatus{Ref: &pb.CheckpointRef{Rule: k.Rule, Job: k.Job, Step: k.Step}, Urgent: true, EtaMs: -1}, nil
	}
	if !c.urgent && !c.state.terminal() {
		if !admin && e.urgentCountLocked(user) >= e.cfg.UrgentPerUser {
			return nil, fmt.Errorf("%w: %s has %d urgent marks, at most %d (newtricks.mirror.urgent.per-user)",
				ErrUserLimit, user, e.urgentCountLocked(user), e.cfg.UrgentPerUser)
		}
		c.urgent, c.urgentBy, c.urgentAdmin = true, user, admin
		e.recountUrgentLocked()
		e.changedLocked(c)
		go e.journal.saveMeta(c)
		e.log.Info("checkpoint marked urgent", "checkpoint", c.key, "by", user)
	}
	return e.statusLocked(c), nil
}

// Complete marks a signal-completed checkpoint complete. The caller must be able to write
// the checkpoint's directory, which must exist: a Complete for a checkpoint not seen yet
// creates its entry only after the directory is found and its owner is one the mirror acts
// for, so no entry is ever left waiting for a directory that does not exist.
func (e *Engine) Complete(ctx context.Context, k Key, user string, admin bool) (*pb.CheckpointStatus, error) {
	if err := checkKey(k); err != nil {
		return nil, err
	}
	e.mu.Lock()
	if !e.recovered {
		e.mu.Unlock()
		return nil, ErrRecovering
	}
	if k.Rule == "" && len(e.cfg.Rules) == 1 {
		k.Rule = e.cfg.Rules[0].Name
	}
	r := e.rule(k.Rule)
	if r == nil {
		e.mu.Unlock()
		return nil, fmt.Errorf("%w %q", ErrUnknownRule, k.Rule)
	}
	if r.Completion != CompleteSignal {
		e.mu.Unlock()
		return nil, fmt.Errorf("%w: rule %s completes by %s", ErrNotSignal, r.Name, r.Completion)
	}
	c, findErr := e.findLocked(k)
	dir := expand(r.Source, k.Job, fmt.Sprint(k.Step))
	if c != nil {
		dir = c.srcDir
	}
	e.mu.Unlock()
	var st *nnhost.FileStatus
	if c == nil {
		var err error
		if st, err = e.host.GetFileStatus(ctx, dir, nnhost.AsService); err != nil {
			if status.Code(err) == codes.NotFound {
				return nil, fmt.Errorf("%w (%s does not exist)", findErr, dir)
			}
			return nil, fmt.Errorf("%w: %s: %v", coproc.ErrUnavailable, dir, err)
		}
		if !st.IsDir {
			return nil, fmt.Errorf("%w: %s is not a directory", coproc.ErrInvalid, dir)
		}
	}
	if !admin {
		if err := e.mayWrite(ctx, dir, user); err != nil {
			return nil, err
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if c == nil {
		in, ok := r.source.match(dir)
		if !ok {
			return nil, findErr
		}
		if err := e.refuseOwnerLocked(st.Owner, nil); err != nil {
			return nil, err
		}
		if c = e.checkpointFor(r, in); c == nil {
			return nil, fmt.Errorf("%w: too many checkpoints in flight (newtricks.mirror.max-checkpoints)", coproc.ErrResourceLimit)
		}
	}
	e.markCompleteLocked(c)
	return e.statusLocked(c), nil
}

// Wait sends the checkpoint's status at most every interval until it is terminal.
func (e *Engine) Wait(ctx context.Context, k Key, user string, admin bool, interval time.Duration, send func(*pb.CheckpointStatus) error) error {
	var last time.Time
	for {
		e.mu.Lock()
		c, err := e.findLocked(k)
		if err != nil && !isNotFound(err) {
			e.mu.Unlock()
			return err
		}
		var st *pb.CheckpointStatus
		var changed chan struct{}
		if c != nil && c.owner == "" && !admin {
			c = nil // not visible until its owner is known: polled like an unknown one
		}
		if c != nil {
			if err := e.allowed(c, user, admin); err != nil {
				e.mu.Unlock()
				return err
			}
			st, changed = e.statusLocked(c), c.changed
		}
		e.mu.Unlock()
		if st != nil {
			terminal := st.State == pb.CheckpointStatus_COMMITTED || st.State == pb.CheckpointStatus_FAILED || st.State == pb.CheckpointStatus_RETIRED
			if terminal || time.Since(last) >= interval {
				if err := send(st); err != nil {
					return err
				}
				last = time.Now()
			}
			if terminal {
				return nil
			}
		}
		wait := time.Until(last.Add(interval))
		if wait < 20*time.Millisecond {
			wait = 20 * time.Millisecond
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed: // nil channel blocks: unknown checkpoints are polled
			// Terminal changes are sent at once; others wait for the interval, but a commit
			// (or failure) during that wait still ends it at once.
			pause := time.NewTimer(wait)
			for {
				e.mu.Lock()
				term, next := c.state.terminal(), c.changed
				e.mu.Unlock()
				if term {
					break
				}
				select {
				case <-ctx.Done():
					pause.Stop()
					return ctx.Err()
				case <-pause.C:
				case <-next:
					continue
				}
				break
			}
			pause.Stop()
		case <-time.After(max(wait, unknownPoll)):
		}
	}
}

// unknownPoll is how often a Wait on a checkpoint not seen yet (or not visible to the
// caller yet) looks again.
const unknownPoll = time.Second

func isNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

// status lists the checkpoints the user may see, newest first.
func (e *Engine) status(user string, admin bool, rule, job string) *pb.MirrorStatusResponse {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := &pb.MirrorStatusResponse{}
	var cs []*checkpoint
	for _, c := range e.ckpts {
		if (rule != "" && c.key.Rule != rule) || (job != "" && c.key.Job != job) {
			continue
		}
		if e.allowed(c, user, admin) != nil {
			continue
		}
		cs = append(cs, c)
	}
	sort.Slice(cs, func(a, b int) bool { return cs[a].firstSeen.After(cs[b].firstSeen) })
	inFlight := 0
	for _, c := range e.ckpts {
		inFlight += c.inFlight
	}
	for _, c := range cs {
		out.Checkpoints = append(out.Checkpoints, e.statusLocked(c))
	}
	rate := e.linkRate.rate()
	out.Link = &pb.LinkStatus{
		BytesInFlight: e.inFlightB.Load(), FilesInFlight: int64(inFlight), RateBytesPerSec: rate,
		BandwidthCap: e.cfg.Bandwidth, RetriesTotal: e.retriesAll.Load(), BytesTotal: e.bytesAll.Load(),
		FilesTotal: e.filesAll.Load(),
	}
	if e.cfg.Bandwidth > 0 {
		out.Link.Utilization = rate / float64(e.cfg.Bandwidth)
	}
	return out
}

var stateProto = map[State]pb.CheckpointStatus_State{
	StateOpen: pb.CheckpointStatus_OPEN, StateCopying: pb.CheckpointStatus_COPYING,
	StateCommitted: pb.CheckpointStatus_COMMITTED, StateFailed: pb.CheckpointStatus_FAILED,
	StateRetired: pb.CheckpointStatus_RETIRED,
}

func (e *Engine) statusLocked(c *checkpoint) *pb.CheckpointStatus {
	ms := func(t time.Time) int64 {
		if t.IsZero() {
			return 0
		}
		return t.UnixMilli()
	}
	st := &pb.CheckpointStatus{
		Ref:   &pb.CheckpointRef{Rule: c.key.Rule, Job: c.key.Job, Step: c.key.Step},
		State: stateProto[c.state], Owner: c.owner, SourcePath: c.srcDir, DestPath: c.dest,
		FilesTotal: int64(len(c.files)), FilesDone: int64(c.filesDone),
		BytesTotal: c.bytesTotal, BytesDone: c.bytesDone, RateBytesPerSec: c.rate.rate(),
		EtaMs: -1, Urgent: c.urgent, Error: c.err, FirstSeenMs: ms(c.firstSeen),
		CompletedMs: ms(c.completedAt), CommittedMs: ms(c.committedAt), Retries: c.retries,
		FilesInFlight: int64(c.inFlight),
	}
	if st.Error == "" && c.lastErr != "" && !c.state.terminal() {
		st.Error = "retrying: " + c.lastErr
	}
	if c.state == StateCommitted && !c.completedAt.IsZero() {
		st.LagMs = c.committedAt.Sub(c.completedAt).Milliseconds()
	}
	if c.state == StateCopying && st.RateBytesPerSec > 0 {
		st.EtaMs = int64(float64(max(c.bytesTotal-c.bytesDone, 0)) / st.RateBytesPerSec * 1000)
	}
	if c.state == StateCommitted {
		st.EtaMs = 0
	}
	return st
}
