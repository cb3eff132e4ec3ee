package offload

import (
	"context"
	"fmt"
	"time"

	"github.com/newtricks/newtricks/dataset"
)

// StepRequest asks for samples of one step of a session (the wire's GetStepRequest).
type StepRequest struct {
	SessionID string
	Step      uint64
	// Slots are positions in the step's global batch, normally the ones this node owns in
	// the reader's rank range.
	Slots []uint32
	// MaxWait bounds the wait for transforms that are queued or running; 0 (or more than
	// Config.MaxWait) takes Config.MaxWait.
	MaxWait time.Duration
}

// Sample is one answered sample of a step (the wire's OffloadSample).
type Sample struct {
	Step uint64
	Slot uint32
	// Source is the sample's position in the schedule's sources, Key its DatasetSample.key.
	Source int
	Key    string
	// Epoch is the epoch the graph ran (or is to run) with.
	Epoch uint64
	// Frames are NTXF frames: a tensor frame per graph output, or one raw frame holding the
	// encoded sample. Empty when Err is set.
	Frames []byte
	// Members are the sample's members that are not media, raw, with tensor Frames (a raw
	// frame holds every member already).
	Members []dataset.Member
	// Err is this sample's own failure (the session goes on); the edge sends its code
	// (sampleCode) and text.
	Err error
	// NodeMicros is the time this node spent on the sample (read + transform), in
	// microseconds.
	NodeMicros uint32
}

// GetStep answers one step: for every requested slot, the transformed frames if a worker made
// them in time, else the raw sample bytes. Asking for step s releases the steps before it and
// schedules s+1..s+lookahead. send gets one sample per call (GetStep's stream).
func (m *Manager) GetStep(ctx context.Context, user string, req StepRequest, send func(Sample) error) error {
	return m.getStep(ctx, user, req, func(b []Sample) error {
		for _, x := range b {
			if err := send(x); err != nil {
				return err
			}
		}
		return nil
	}, false)
}

// GetStepBatch answers one step as GetStep does, with the samples grouped: send gets every
// answered sample the node holds whenever it is about to wait (for a transform that is not
// finished, or to read a sample's raw bytes) and at the end. A step whose samples are all
// transformed already is one call of send.
func (m *Manager) GetStepBatch(ctx context.Context, user string, req StepRequest, send func([]Sample) error) error {
	return m.getStep(ctx, user, req, send, true)
}

func (m *Manager) getStep(ctx context.Context, user string, req StepRequest, send func([]Sample) error, batch bool) error {
	wait := m.cfg.MaxWait
	if w := req.MaxWait; w > 0 && w < wait {
		wait = w
	}
	m.mu.Lock()
	s, err := m.session(user, req.SessionID)
	if err != nil {
		m.mu.Unlock()
		return err
	}
	step := req.Step
	if limit := m.cfg.StepLimit(len(s.idx)); step >= limit {
		m.mu.Unlock()
		return fmt.Errorf("%w: step %d, limit %d for %d sources (%s.step.max)", ErrInvalid, step, limit, len(s.idx), Prefix)
	}
	if s.plan.End(step) {
		m.mu.Unlock()
		return fmt.Errorf("%w: step %d is past the schedule", ErrInvalid, step)
	}
	if len(req.Slots) > s.hi-s.lo {
		m.mu.Unlock()
		return fmt.Errorf("%w: %d slots requested, the rank has %d", ErrInvalid, len(req.Slots), s.hi-s.lo)
	}
	for _, k := range req.Slots {
		if int(k) < s.lo || int(k) >= s.hi {
			m.mu.Unlock()
			return fmt.Errorf("%w: slot %d is not in the rank's range [%d, %d)", ErrInvalid, k, s.lo, s.hi)
		}
	}
	m.mu.Unlock()

	// The step's slots, outside m.mu: a step far from the ones the plan computed costs time in
	// proportion to the distance (Config.StepLimit), and once it is computed the steps
	// prepareLocked adds after it cost only their distance from it.
	slots, err := s.plan.Step(step)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	m.mu.Lock()
	if s.closed {
		m.mu.Unlock()
		return fmt.Errorf("%w: session %q (expired, closed, or the node restarted: open a new one)", ErrNotFound, req.SessionID)
	}
	for st := range s.steps {
		if st < step {
			m.dropStepLocked(s, st)
		}
	}
	if step > s.cur || step < s.cur { // a rewind (reader restarted) reschedules too
		for st := range s.steps {
			if st > step+uint64(s.ahead) {
				m.dropStepLocked(s, st)
			}
		}
		s.cur = step
	}
	if err := m.prepareLocked(s); err != nil {
		m.mu.Unlock()
		return err
	}
	js := s.steps[step]
	m.mu.Unlock()

	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	expired := false
	var held []Sample // answered, not sent yet (batch)
	flush := func() error {
		if len(held) == 0 {
			return nil
		}
		err := send(held)
		held = nil
		return err
	}
	for _, k := range req.Slots {
		sl := slots[k]
		smp := s.idx[sl.Source].Sample(sl.Index)
		out := Sample{Step: step, Slot: k, Source: sl.Source, Key: smp.GetKey(), Epoch: sl.Epoch}
		j := js[int(k)]
		m.mu.Lock()
		ready := j != nil && j.state == finished && !j.canceled
		m.mu.Unlock()
		if !ready {
			// About to wait for a transform or to read raw bytes: send what is ready first.
			if err := flush(); err != nil {
				return err
			}
		}
		if j != nil && !expired && !ready {
			j = m.await(ctx, j, deadline.C, &expired)
		}
		m.mu.Lock()
		if j != nil && j.state == finished && !j.canceled {
			out.Frames, out.Members, out.NodeMicros = j.frames, j.members, j.nodeMicros
			if j.err != nil {
				out.Err = j.err
				m.countErrorLocked(j.err)
			} else {
				m.ctr.Transformed++
				m.ctr.SentBytes += j.size
			}
			m.queued -= j.size
			j.frames, j.members, j.size = nil, nil, 0
			j.canceled = true
			m.mu.Unlock()
		} else {
			if j != nil {
				j.canceled = true // a queued job is dropped; a running one finishes unused
			}
			m.mu.Unlock()
			start := time.Now()
			var frames []byte
			err := m.safely("raw read", func() error {
				release, err := m.acquire(ctx, m.rawSlots)
				if err != nil {
					return err
				}
				defer release()
				frames, err = s.raw(ctx, sl, m.cfg.MaxReadBytes)
				return err
			})
			if err == nil && m.restamp {
				frames, err = restamp(frames, m.domain)
			}
			out.NodeMicros = uint32(time.Since(start).Microseconds())
			m.mu.Lock()
			if err != nil {
				out.Err = err
				m.countErrorLocked(err)
			} else {
				out.Frames = frames
				m.ctr.Raw++
				m.ctr.SentBytes += int64(len(frames))
			}
			m.mu.Unlock()
		}
		held = append(held, out)
		if !batch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// await waits for a job until it finishes, the deadline passes, or the node sheds. A shedding
// node does not wait for a job that is running either: its worker runs at low priority on a
// loaded CPU and may take many times its usual time, while the reader transforms the raw
// bytes at once (the job finishes unused).
func (m *Manager) await(ctx context.Context, j *job, deadline <-chan time.Time, expired *bool) *job {
	for {
		m.mu.Lock()
		st := j.state
		m.mu.Unlock()
		if st != finished && m.gov.Shedding() {
			return j
		}
		select {
		case <-j.done:
			return j
		case <-deadline:
			*expired = true
			return j
		case <-ctx.Done():
			return j
		case <-m.gov.Changed():
		}
	}
}
