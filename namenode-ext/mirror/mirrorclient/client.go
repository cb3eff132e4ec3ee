// Package mirrorclient is the Go client of namenode-ext's Mirror service, for evaluation jobs,
// trainers and the newtricks CLI: see what is mirrored, mark a checkpoint urgent, signal a
// checkpoint complete, and wait until a checkpoint is readable on the evaluation cluster.
//
//	c, err := mirrorclient.Dial("nn-a:9880", "alice")   // an HA pair: "nn-a1:9880,nn-a2:9880"
//	_, err = c.Urgent(ctx, mirrorclient.Ref{Job: "llama", Step: 1000})
//	cp, err := c.Wait(ctx, mirrorclient.Ref{Job: "llama", Step: 1000}, time.Second, nil)
//	// cp.State == mirrorclient.Committed: read cp.DestPath on dc-b
//
// Errors carry gRPC codes (InvalidArgument, NotFound, PermissionDenied, Unavailable...); a
// checkpoint that failed is returned with State Failed and its Error, and ErrFailed.
package mirrorclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/newtricks/newtricks/internal/apiclient"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// ErrFailed is returned by Wait when the checkpoint failed (its Error says why).
var ErrFailed = errors.New("checkpoint mirror failed")

// Ref names a checkpoint. Rule may be empty when one rule is configured.
type Ref struct {
	Rule string `json:"rule,omitempty"`
	Job  string `json:"job"`
	Step int64  `json:"step"`
}

// States of a checkpoint.
const (
	Open      = "OPEN"
	Copying   = "COPYING"
	Committed = "COMMITTED"
	Failed    = "FAILED"
	Retired   = "RETIRED"
)

// Checkpoint is one checkpoint's mirroring status.
type Checkpoint struct {
	Ref           Ref       `json:"ref"`
	State         string    `json:"state"`
	Owner         string    `json:"owner"`
	SourcePath    string    `json:"source_path"`
	DestPath      string    `json:"dest_path"`
	FilesTotal    int64     `json:"files_total"`
	FilesDone     int64     `json:"files_done"`
	FilesInFlight int64     `json:"files_in_flight"`
	BytesTotal    int64     `json:"bytes_total"`
	BytesDone     int64     `json:"bytes_done"`
	Rate          float64   `json:"rate_bytes_per_sec"`
	ETA           Duration  `json:"eta_ms"` // -1 when unknown
	Urgent        bool      `json:"urgent"`
	Error         string    `json:"error,omitempty"`
	FirstSeen     time.Time `json:"first_seen"`
	Completed     time.Time `json:"completed,omitempty"`
	Committed     time.Time `json:"committed,omitempty"`
	Lag           Duration  `json:"lag_ms"`
	Retries       int64     `json:"retries"`
}

// Terminal reports whether the checkpoint will not change any more.
func (c *Checkpoint) Terminal() bool {
	return c.State == Committed || c.State == Failed || c.State == Retired
}

// Duration marshals as milliseconds.
type Duration time.Duration

func (d Duration) MarshalJSON() ([]byte, error) {
	if d < 0 {
		return []byte("-1"), nil
	}
	return []byte(fmt.Sprint(time.Duration(d).Milliseconds())), nil
}

// Link is the mirror's link status.
type Link struct {
	BytesInFlight int64   `json:"bytes_in_flight"`
	FilesInFlight int64   `json:"files_in_flight"`
	Rate          float64 `json:"rate_bytes_per_sec"`
	Utilization   float64 `json:"utilization"`
	BandwidthCap  int64   `json:"bandwidth_cap"`
	Retries       int64   `json:"retries_total"`
	BytesTotal    int64   `json:"bytes_total"`
	FilesTotal    int64   `json:"files_total"`
}

// Status is the answer of Status.
type Status struct {
	Checkpoints []*Checkpoint `json:"checkpoints"`
	Link        Link          `json:"link"`
}

// Client calls the Mirror service as one HDFS user.
type Client struct {
	conn *apiclient.Conn
	rpc  pb.MirrorClient
	user string
}

// Dial connects to namenode-ext's public API at addr (host:port; a nameservice's namenode-ext
// addresses comma-separated: calls go to the active NameNode's and fail over as
// apiclient.Failover says), plaintext unless opts give transport credentials
// (authn.ClientConfig.DialOptions).
func Dial(addr, user string, opts ...grpc.DialOption) (*Client, error) {
	conn, err := apiclient.Dial(addr, opts...)
	if err != nil {
		return nil, err
	}
	return newClient(conn, user), nil
}

// New wraps an existing connection; Close leaves it open.
func New(conn grpc.ClientConnInterface, user string) *Client {
	return newClient(apiclient.Wrap(conn), user)
}

func newClient(conn *apiclient.Conn, user string) *Client {
	return &Client{conn: conn, rpc: pb.NewMirrorClient(conn), user: user}
}

// Close closes a connection made by Dial.
func (c *Client) Close() error { return c.conn.Close() }

func refProto(r Ref) *pb.CheckpointRef {
	return &pb.CheckpointRef{Rule: r.Rule, Job: r.Job, Step: r.Step}
}

// FromProto converts a status message.
func FromProto(s *pb.CheckpointStatus) *Checkpoint {
	t := func(ms int64) time.Time {
		if ms == 0 {
			return time.Time{}
		}
		return time.UnixMilli(ms)
	}
	eta := Duration(-1)
	if s.GetEtaMs() >= 0 {
		eta = Duration(time.Duration(s.GetEtaMs()) * time.Millisecond)
	}
	state := s.GetState().String()
	if s.GetState() == pb.CheckpointStatus_STATE_UNSPECIFIED {
		state = "UNKNOWN"
	}
	return &Checkpoint{
		Ref:   Ref{Rule: s.GetRef().GetRule(), Job: s.GetRef().GetJob(), Step: s.GetRef().GetStep()},
		State: state, Owner: s.GetOwner(), SourcePath: s.GetSourcePath(), DestPath: s.GetDestPath(),
		FilesTotal: s.GetFilesTotal(), FilesDone: s.GetFilesDone(), FilesInFlight: s.GetFilesInFlight(),
		BytesTotal: s.GetBytesTotal(), BytesDone: s.GetBytesDone(), Rate: s.GetRateBytesPerSec(), ETA: eta,
		Urgent: s.GetUrgent(), Error: s.GetError(), FirstSeen: t(s.GetFirstSeenMs()), Completed: t(s.GetCompletedMs()),
		Committed: t(s.GetCommittedMs()), Lag: Duration(time.Duration(s.GetLagMs()) * time.Millisecond), Retries: s.GetRetries(),
	}
}

// Status lists the checkpoints the user may see (all for an administrator), newest first.
func (c *Client) Status(ctx context.Context, rule, job string) (*Status, error) {
	r, err := c.rpc.Status(ctx, &pb.MirrorStatusRequest{User: c.user, Rule: rule, Job: job})
	if err != nil {
		return nil, err
	}
	out := &Status{}
	for _, s := range r.GetCheckpoints() {
		out.Checkpoints = append(out.Checkpoints, FromProto(s))
	}
	if l := r.GetLink(); l != nil {
		out.Link = Link{BytesInFlight: l.BytesInFlight, FilesInFlight: l.FilesInFlight, Rate: l.RateBytesPerSec,
			Utilization: l.Utilization, BandwidthCap: l.BandwidthCap, Retries: l.RetriesTotal, BytesTotal: l.BytesTotal,
			FilesTotal: l.FilesTotal}
	}
	return out, nil
}

// Urgent moves the checkpoint to the front of the mirror's work.
func (c *Client) Urgent(ctx context.Context, ref Ref) (*Checkpoint, error) {
	s, err := c.rpc.Urgent(ctx, &pb.MirrorUrgentRequest{User: c.user, Ref: refProto(ref)})
	if err != nil {
		return nil, err
	}
	return FromProto(s), nil
}

// Complete signals that a checkpoint of a "signal" rule is complete on dc-a.
func (c *Client) Complete(ctx context.Context, ref Ref) (*Checkpoint, error) {
	s, err := c.rpc.Complete(ctx, &pb.MirrorCompleteRequest{User: c.user, Ref: refProto(ref)})
	if err != nil {
		return nil, err
	}
	return FromProto(s), nil
}

// Wait blocks until the checkpoint is committed on dc-b (or failed, or ctx ends), calling
// progress (if not nil) with each update, at most every interval. Wait only reads, so a stream
// that breaks UNAVAILABLE after a status arrived (its NameNode killed or failed over; over a
// nameservice's addresses the stream fails over at its start, and the next one goes to the new
// active) is opened again, at most MaxResumes times.
func (c *Client) Wait(ctx context.Context, ref Ref, interval time.Duration, progress func(*Checkpoint)) (*Checkpoint, error) {
	var last *Checkpoint
	for resumes := 0; ; resumes++ {
		done, err := c.wait(ctx, ref, interval, func(cp *Checkpoint) {
			last = cp
			if progress != nil {
				progress(cp)
			}
		})
		if err == nil && done {
			break
		}
		if err == nil {
			err = fmt.Errorf("wait %s/%d: stream ended without a status", ref.Job, ref.Step)
			return last, err
		}
		if status.Code(err) != codes.Unavailable || last == nil || resumes >= MaxResumes || ctx.Err() != nil {
			return last, err
		}
		select {
		case <-ctx.Done():
			return last, err
		case <-time.After(resumeDelay):
		}
	}
	if last.State == Failed {
		return last, fmt.Errorf("%w: %s/%d: %s", ErrFailed, ref.Job, ref.Step, last.Error)
	}
	return last, nil
}

// MaxResumes bounds how often Wait opens its stream again after it broke UNAVAILABLE.
const MaxResumes = 20

// resumeDelay is the pause before a stream is opened again.
const resumeDelay = 250 * time.Millisecond

// wait reads one Wait stream to its end; done: it ended after a status.
func (c *Client) wait(ctx context.Context, ref Ref, interval time.Duration, got func(*Checkpoint)) (bool, error) {
	st, err := c.rpc.Wait(ctx, &pb.MirrorWaitRequest{User: c.user, Ref: refProto(ref), IntervalMs: interval.Milliseconds()})
	if err != nil {
		return false, err
	}
	n := 0
	for {
		m, err := st.Recv()
		if err == io.EOF {
			return n > 0, nil
		}
		if err != nil {
			return false, err
		}
		n++
		got(FromProto(m))
	}
}
