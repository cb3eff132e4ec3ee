package offload

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"golang.org/x/sys/unix"

	"github.com/newtricks/newtricks/dataset"
	"github.com/newtricks/newtricks/schedule"
)

// job is one owned sample of a step.
type job struct {
	s          *Session
	step       uint64
	slot       int
	sl         schedule.Slot
	state      int // queued, running, finished
	canceled   bool
	frames     []byte
	members    []dataset.Member // the sample's non-media members, raw (members.go)
	size       int64            // bytes of frames and members, counted in Manager.queued
	err        error
	nodeMicros uint32
	done       chan struct{}
}

// A job's states.
const (
	queued = iota
	running
	finished
)

// prepareLocked creates the jobs of steps cur..cur+ahead that are not there yet. A panic while
// computing a step's owners ends the session (ErrInternal).
func (m *Manager) prepareLocked(s *Session) error {
	if s.rawOnly {
		return nil
	}
	for step := s.cur; step <= s.cur+uint64(s.ahead); step++ {
		if _, ok := s.steps[step]; ok {
			continue
		}
		if s.plan.End(step) {
			break
		}
		var slots []schedule.Slot
		var owners []int
		err := m.safely("prepare step", func() error {
			var err error
			slots, owners, err = dataset.StepOwners(s.plan, s.idx, s.files, s.members, step)
			return err
		})
		if errors.Is(err, ErrInternal) {
			// What the session's own data made of the plan: that session ends, no other.
			m.log.Error("offload session dropped", "session", s.id, "user", s.user, "error", err)
			m.dropLocked(s)
			m.wake.Broadcast()
			return fmt.Errorf("session %s ended: %w", s.id, err)
		}
		if err != nil {
			break
		}
		js := map[int]*job{}
		for k := s.lo; k < s.hi; k++ {
			if owners[k] != s.self {
				continue
			}
			j := &job{s: s, step: step, slot: k, sl: slots[k], done: make(chan struct{})}
			js[k] = j
			m.jobs = append(m.jobs, j)
		}
		s.steps[step] = js
	}
	m.wake.Broadcast()
	return nil
}

// dropStepLocked forgets a step: queued jobs are canceled, finished frames released.
func (m *Manager) dropStepLocked(s *Session, step uint64) {
	for _, j := range s.steps[step] {
		j.canceled = true
		if j.state == finished {
			m.queued -= j.size
			j.frames, j.members, j.size = nil, nil, 0
		}
	}
	delete(s.steps, step)
}

// nextLocked picks the queued job closest to its session's current step, while the queue is
// under its byte cap (Config.QueueMaxBytes, for every step: the step a reader waits for too;
// its samples then go out raw). A worker's last sample may take the queue past the cap by its
// own size.
func (m *Manager) nextLocked() *job {
	best, bi := (*job)(nil), -1
	keep := m.jobs[:0]
	for _, j := range m.jobs {
		if j.canceled || j.state != queued {
			continue
		}
		keep = append(keep, j)
	}
	m.jobs = keep
	if m.queued >= m.cfg.QueueMaxBytes {
		return nil
	}
	for i, j := range m.jobs {
		if best == nil || j.step-j.s.cur < best.step-best.s.cur {
			best, bi = j, i
		}
	}
	if best != nil {
		m.jobs = append(m.jobs[:bi], m.jobs[bi+1:]...)
	}
	return best
}

// worker takes jobs (nextLocked) while the governor does not shed, until ctx ends.
func (m *Manager) worker(ctx context.Context) {
	// The worker keeps its own OS thread at a lower priority for its whole life (cgo FFmpeg
	// calls run on it too), so the DataNode's threads win the CPU when both want it.
	runtime.LockOSThread()
	if m.cfg.Nice > 0 {
		if err := unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), m.cfg.Nice); err != nil {
			m.log.Warn("cannot lower the transform worker's priority", "error", err)
		}
	}
	for {
		m.mu.Lock()
		var j *job
		for ctx.Err() == nil {
			if !m.gov.Shedding() {
				if j = m.nextLocked(); j != nil {
					break
				}
			}
			m.wake.Wait()
		}
		if j == nil {
			m.mu.Unlock()
			return
		}
		j.state = running
		m.mu.Unlock()

		start := time.Now()
		var frames []byte
		var members []dataset.Member
		err := m.safely("transform", func() error {
			var err error
			frames, members, err = j.s.transform(ctx, j.sl, m.cfg.MaxReadBytes)
			return err
		})
		took := time.Since(start)
		if err == nil && m.restamp {
			frames, err = restamp(frames, m.domain)
		}
		if m.transformed != nil {
			m.transformed(took)
		}
		m.mu.Lock()
		j.state, j.frames, j.members, j.err = finished, frames, members, err
		j.nodeMicros = uint32(min(took.Microseconds(), 1<<32-1))
		if j.canceled {
			j.frames, j.members = nil, nil
		} else {
			j.size = int64(len(frames)) + membersSize(members)
			m.queued += j.size
		}
		close(j.done)
		m.wake.Broadcast()
		m.mu.Unlock()
	}
}
