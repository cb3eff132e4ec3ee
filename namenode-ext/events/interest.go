package events

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// Interest is what a subsystem consumes. The hook forwards only the union of every Interest,
// so a NameNode pays nothing for the events nobody wants.
type Interest struct {
	// Audit are audited commands ("open", "create", ...).
	Audit []string
	// Namespace are namespace event types ("CREATE", "CLOSE", "RENAME", "UNLINK", ...).
	Namespace []string
	// PathPrefixes limit namespace events to paths (or rename destinations) starting with one
	// of them. Empty: every path. The union is every path if any Interest with namespace
	// types leaves it empty.
	PathPrefixes []string
	// AuditMinRepeats, when >= 2, lets the hook hold back an audited (cmd, src) pair until it
	// has been audited that many times within AuditRepeatWindow (then the held records and the
	// pair's further records are forwarded; see EventFilter.audit_min_repeats). For a consumer
	// that can act only on repeated calls, such as reactive hints (K distinct clients open one
	// file within W). 0 or 1: every audited record of Audit. The union holds back only as much
	// as every interest with audit commands allows: if any of them has AuditMinRepeats <= 1
	// (or no window), nothing is held; otherwise the least AuditMinRepeats with the longest
	// AuditRepeatWindow.
	AuditMinRepeats int
	// AuditRepeatWindow is the window of AuditMinRepeats.
	AuditRepeatWindow time.Duration
}

// ParseInterest reads a comma-separated list: namespace types in capitals ("CLOSE") and audited
// commands as "audit:<cmd>" ("audit:open"). Its audit commands are forwarded in full
// (AuditMinRepeats 0: no repeat hold).
func ParseInterest(list string) (Interest, error) {
	var in Interest
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		switch {
		case f == "":
		case strings.HasPrefix(f, "audit:"):
			if cmd := strings.TrimPrefix(f, "audit:"); cmd != "" {
				in.Audit = append(in.Audit, cmd)
			}
		default:
			if _, ok := pb.NamespaceEvent_Type_value[f]; !ok || f == "TYPE_UNSPECIFIED" {
				return Interest{}, fmt.Errorf("unknown event %q: want a namespace type (CREATE, CLOSE, APPEND, RENAME, METADATA, UNLINK, TRUNCATE) or audit:<cmd>", f)
			}
			in.Namespace = append(in.Namespace, f)
		}
	}
	return in, nil
}

// Want adds an interest; the hook learns the new union with the next acknowledgement.
// The returned function withdraws it.
func (s *Sink) Want(in Interest) (withdraw func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.nextSub
	s.nextSub++
	s.interests[id] = in
	s.filterVer++
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if _, ok := s.interests[id]; ok {
			delete(s.interests, id)
			s.filterVer++
		}
	}
}

// Filter is the union of every interest, for Configure's answer.
func (s *Sink) Filter() *pb.EventFilter {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sentVer = s.filterVer
	return s.filterLocked()
}

func (s *Sink) filterLocked() *pb.EventFilter {
	f := &pb.EventFilter{}
	allPaths := false
	holdAll := true // every interest with audit commands allows a repeat hold
	minRepeats, window := 0, time.Duration(0)
	for _, in := range s.interests {
		f.AuditCommands = append(f.AuditCommands, in.Audit...)
		if len(in.Audit) > 0 {
			if in.AuditMinRepeats <= 1 || in.AuditRepeatWindow < time.Millisecond {
				holdAll = false
			} else {
				if minRepeats == 0 || in.AuditMinRepeats < minRepeats {
					minRepeats = in.AuditMinRepeats
				}
				window = max(window, in.AuditRepeatWindow)
			}
		}
		for _, t := range in.Namespace {
			f.NamespaceTypes = append(f.NamespaceTypes, pb.NamespaceEvent_Type(pb.NamespaceEvent_Type_value[t]))
		}
		if len(in.Namespace) > 0 {
			if len(in.PathPrefixes) == 0 {
				allPaths = true
			}
			f.NamespacePathPrefixes = append(f.NamespacePathPrefixes, in.PathPrefixes...)
		}
	}
	if holdAll && minRepeats >= 2 {
		f.AuditMinRepeats = int32(min(minRepeats, math.MaxInt32))
		// Rounded up: the hook must never hold back a pair the consumer's window still spans.
		f.AuditRepeatWindowMs = int64((window + time.Millisecond - 1) / time.Millisecond)
	}
	slices.Sort(f.AuditCommands)
	f.AuditCommands = slices.Compact(f.AuditCommands)
	slices.Sort(f.NamespaceTypes)
	f.NamespaceTypes = slices.Compact(f.NamespaceTypes)
	if allPaths {
		f.NamespacePathPrefixes = nil
	}
	slices.Sort(f.NamespacePathPrefixes)
	f.NamespacePathPrefixes = slices.Compact(f.NamespacePathPrefixes)
	return f
}

// Cursor is held by a subscriber that keeps state of its own (the checkpoint mirror): the sink
// reports a namespace txid durable to the hook, which resumes after it when either process
// restarts, only once every Cursor has marked it. Such a subscriber persists the txid it
// handled and, after a restart, ignores events at or below it: together with the hook's
// resume that makes each namespace event reach it exactly once.
type Cursor struct {
	s    *Sink
	id   int
	mark int64
}

// NewCursor registers a durable subscriber whose state already covers every txid up to after
// (-1: none).
func (s *Sink) NewCursor(after int64) *Cursor {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := &Cursor{s: s, id: s.nextSub, mark: after}
	s.nextSub++
	s.cursors[c.id] = c
	return c
}

// Mark records that every namespace event up to txid is durable in the subscriber.
func (c *Cursor) Mark(txid int64) {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	c.mark = max(c.mark, txid)
}

// Close removes the cursor: durability no longer waits for it.
func (c *Cursor) Close() {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	delete(c.s.cursors, c.id)
}

// Stream reports where the hook (re)started the namespace stream for this process: the
// resume_txid of the latest batch that carried one (0: no namespace batch yet), the txid of
// that batch's first event, and the hook's count of edit-log gaps it skipped since the NameNode
// started. The hook resumes after its persisted position, which passes txids of events nobody
// selected, so resume may lie beyond a subscriber's persisted txid T without anything missed;
// a hook that had no position to resume from (its state file lost) starts at the first event
// it reads (resume == first). A subscriber that persisted T has missed nothing if
// resume <= T+1, or resume < first, and there were no gaps; otherwise it must look at the
// namespace itself (list) for what it missed.
func (c *Cursor) Stream() (resume, first, gaps int64) {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	return c.s.resumeTxid, c.s.resumeFirst, c.s.gapsTotal
}
