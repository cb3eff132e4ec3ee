package mirror

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"google.golang.org/grpc"

	"github.com/newtricks/newtricks/internal/authn"
	"github.com/newtricks/newtricks/internal/coproc"
	"github.com/newtricks/newtricks/namenode-ext/nnhost"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// RegisterGRPC registers the Mirror service on s (namenode-ext's public API server).
func (e *Engine) RegisterGRPC(s *grpc.Server) { pb.RegisterMirrorServer(s, &server{e: e}) }

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
	return st, coproc.ToStatus(err)
}

func (s *server) Complete(ctx context.Context, req *pb.MirrorCompleteRequest) (*pb.CheckpointStatus, error) {
	user, admin, err := s.caller(ctx, req.GetUser())
	if err != nil {
		return nil, coproc.ToStatus(err)
	}
	st, err := s.e.Complete(ctx, refOf(req.GetRef()), user, admin)
	return st, coproc.ToStatus(err)
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
	return coproc.ToStatus(s.e.Wait(ctx, refOf(req.GetRef()), user, admin, interval, stream.Send))
}

func refOf(r *pb.CheckpointRef) Key {
	return Key{Rule: r.GetRule(), Job: r.GetJob(), Step: r.GetStep()}
}

// find returns the checkpoint a ref names (e.mu held); rule may be empty.
func (e *Engine) findLocked(k Key) (*checkpoint, error) {
	if k.Rule != "" && e.rule(k.Rule) == nil {
		return nil, fmt.Errorf("%w %q", ErrUnknownRule, k.Rule)
	}
	if k.Step < 0 || k.Job == "" {
		return nil, fmt.Errorf("%w: job is required and step must be >= 0", coproc.ErrInvalid)
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

func (e *Engine) allowed(c *checkpoint, user string, admin bool) error {
	if admin || c.owner == "" || c.owner == user {
		return nil
	}
	return fmt.Errorf("%w: %s is %s's", ErrPermission, c.key, c.owner)
}

// Urgent moves a checkpoint to the front; one not seen yet is urgent from its first file.
func (e *Engine) Urgent(ctx context.Context, k Key, user string, admin bool) (*pb.CheckpointStatus, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.recovered {
		return nil, ErrRecovering
	}
	c, err := e.findLocked(k)
	if err != nil {
		if k.Rule == "" && len(e.cfg.Rules) == 1 {
			k.Rule = e.cfg.Rules[0].Name
		}
		if k.Rule == "" || e.rule(k.Rule) == nil || k.Job == "" || k.Step < 0 {
			return nil, err
		}
		e.urgentSoon[k] = true
		return &pb.CheckpointStatus{Ref: &pb.CheckpointRef{Rule: k.Rule, Job: k.Job, Step: k.Step}, Urgent: true, EtaMs: -1}, nil
	}
	if err := e.allowed(c, user, admin); err != nil {
		return nil, err
	}
	if !c.urgent && !c.state.terminal() {
		c.urgent = true
		e.recountUrgentLocked()
		e.changedLocked(c)
		go e.journal.saveMeta(c)
		e.log.Info("checkpoint marked urgent", "checkpoint", c.key, "by", user)
	}
	return e.statusLocked(c), nil
}

// Complete marks a signal-completed checkpoint complete.
func (e *Engine) Complete(ctx context.Context, k Key, user string, admin bool) (*pb.CheckpointStatus, error) {
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
	c, err := e.findLocked(k)
	e.mu.Unlock()
	if err != nil {
		// Not seen yet (e.g. no file closed since the restart): the directory must exist.
		stepStr := fmt.Sprint(k.Step)
		dir := expand(r.Source, k.Job, stepStr)
		in, ok := r.source.match(dir)
		if !ok {
			return nil, err
		}
		e.mu.Lock()
		c = e.checkpointFor(r, in)
		e.mu.Unlock()
		if c == nil {
			return nil, fmt.Errorf("%w: too many checkpoints in flight", coproc.ErrResourceLimit)
		}
	}
	e.mu.Lock()
	resolved, dir := c.resolved, c.srcDir
	e.mu.Unlock()
	if !resolved {
		// Only the owner (or an administrator) may complete it: look the owner up now.
		st, err := e.host.GetFileStatus(ctx, dir, nnhost.AsService)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrNotFound, dir, err)
		}
		if !admin && st.Owner != user {
			return nil, fmt.Errorf("%w: %s is %s's", ErrPermission, dir, st.Owner)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.allowed(c, user, admin); err != nil {
		return nil, err
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
		case <-time.After(max(wait, 100*time.Millisecond)):
		}
	}
}

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
