// Package hintclient is the Go client of namenode-ext's Hints service, for trainers and the
// newtricks CLI: tell namenode-ext which files are about to be read by many ranks, wait until
// they are ready, and say when the load is done.
//
//	c, err := hintclient.Dial("nn-host:9880", "alice")   // an HA pair: "nn1:9880,nn2:9880"
//	plan, err := c.Create(ctx, hintclient.Hint{Paths: []string{"/ckpt/step-1000"},
//		In: 10 * time.Second, For: 10 * time.Minute, Readers: 512})
//	st, err := c.WaitReady(ctx, plan.HintID, time.Second)
//	... load ...
//	_, err = c.Done(ctx, plan.HintID)
//
// Errors wrap the sentinels of package hotspot (hotspot.ErrInvalid, ErrPermission,
// ErrNotFound, ErrUnavailable...), so callers branch with errors.Is.
package hintclient

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc"

	"github.com/newtricks/newtricks/internal/apiclient"
	"github.com/newtricks/newtricks/namenode-ext/hotspot"
	nnv1 "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// Hint is what a trainer asks for.
type Hint struct {
	// Paths: absolute files, directories (recursively) or globs.
	Paths []string
	// In: the files turn hot this long from now.
	In time.Duration
	// For: they stay hot this long; then namenode-ext restores their factors.
	For time.Duration
	// Readers: expected concurrent readers of every file.
	Readers int
	// Replication: explicit target factor, 0 lets the planner choose.
	Replication int
	// DryRun: plan only.
	DryRun bool
}

// Client calls the Hints service as one HDFS user.
type Client struct {
	conn *apiclient.Conn
	rpc  nnv1.HintsClient
	user string
}

// Dial connects to namenode-ext's public API at addr (host:port; a nameservice's namenode-ext
// addresses comma-separated: calls go to the active NameNode's and fail over as
// apiclient.Failover says: Create and Extend are not sent again after a connection broke in
// flight, their error is returned), plaintext unless opts give transport credentials
// (authn.ClientConfig.DialOptions).
func Dial(addr, user string, opts ...grpc.DialOption) (*Client, error) {
	conn, err := apiclient.Dial(addr, opts...)
	if err != nil {
		return nil, err
	}
	return newClient(conn, user), nil
}

// New wraps an existing connection; Close leaves it open.
func New(cc grpc.ClientConnInterface, user string) *Client {
	return newClient(apiclient.Wrap(cc), user)
}

func newClient(conn *apiclient.Conn, user string) *Client {
	return &Client{conn: conn, rpc: nnv1.NewHintsClient(conn), user: user}
}

// Close closes the connection made by Dial.
func (c *Client) Close() error { return c.conn.Close() }

// Create sends a hint and returns the plan; a partial plan lists what was left out and why.
func (c *Client) Create(ctx context.Context, h Hint) (*hotspot.Plan, error) {
	req := hotspot.RequestToProto(hotspot.Request{Paths: h.Paths, HotIn: h.In, HotFor: h.For,
		Readers: h.Readers, User: c.user, Replication: h.Replication, DryRun: h.DryRun})
	p, err := c.rpc.Create(ctx, req)
	if err != nil {
		return nil, hotspot.FromStatus(err)
	}
	return hotspot.PlanFromProto(p), nil
}

// Status reports replicas placed per file.
func (c *Client) Status(ctx context.Context, id string) (*hotspot.HintStatus, error) {
	s, err := c.rpc.Status(ctx, &nnv1.HintStatusRequest{HintId: id, User: c.user})
	if err != nil {
		return nil, hotspot.FromStatus(err)
	}
	return hotspot.StatusFromProto(s), nil
}

// Extend moves the end of the hot window d later.
func (c *Client) Extend(ctx context.Context, id string, d time.Duration) (*hotspot.HintStatus, error) {
	s, err := c.rpc.Extend(ctx, &nnv1.ExtendHintRequest{HintId: id, User: c.user, ExtendByMs: d.Milliseconds()})
	if err != nil {
		return nil, hotspot.FromStatus(err)
	}
	return hotspot.StatusFromProto(s), nil
}

// Done ends the hint now: the files are loaded, restore their factors.
func (c *Client) Done(ctx context.Context, id string) (*hotspot.HintStatus, error) {
	return c.end(ctx, id, false)
}

// Cancel ends the hint now, recorded as cancelled.
func (c *Client) Cancel(ctx context.Context, id string) (*hotspot.HintStatus, error) {
	return c.end(ctx, id, true)
}

func (c *Client) end(ctx context.Context, id string, cancel bool) (*hotspot.HintStatus, error) {
	s, err := c.rpc.Done(ctx, &nnv1.DoneHintRequest{HintId: id, User: c.user, Cancel: cancel})
	if err != nil {
		return nil, hotspot.FromStatus(err)
	}
	return hotspot.StatusFromProto(s), nil
}

// List returns the user's active hints.
func (c *Client) List(ctx context.Context) ([]*hotspot.HintStatus, error) {
	out, _, err := c.ListAll(ctx)
	return out, err
}

// ListAll returns the user's active hints and, for the superuser, the hint state namenode-ext
// could not use after a restart (undecodable records or file markers, left in place).
func (c *Client) ListAll(ctx context.Context) ([]*hotspot.HintStatus, []string, error) {
	r, err := c.rpc.List(ctx, &nnv1.ListHintsRequest{User: c.user})
	if err != nil {
		return nil, nil, hotspot.FromStatus(err)
	}
	var out []*hotspot.HintStatus
	for _, s := range r.Hints {
		out = append(out, hotspot.StatusFromProto(s))
	}
	return out, r.Problems, nil
}

// WaitReady polls Status every poll until the hint is ready, has ended, or ctx ends.
func (c *Client) WaitReady(ctx context.Context, id string, poll time.Duration) (*hotspot.HintStatus, error) {
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		s, err := c.Status(ctx, id)
		if err != nil {
			return nil, err
		}
		if s.Ready() {
			return s, nil
		}
		switch s.State {
		case hotspot.StateFinished, hotspot.StateCancelled, hotspot.StateRestoring:
			return s, fmt.Errorf("hint %s is %s: %w", id, s.State, hotspot.ErrFinished)
		}
		select {
		case <-ctx.Done():
			return s, ctx.Err()
		case <-t.C:
		}
	}
}
