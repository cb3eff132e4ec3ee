package hotspot

import (
	"context"
	"path"
	"sync"
	"time"
)

// reactive counts distinct clients opening each file (audit "open" events) and fires when K
// distinct clients opened one file within W. A fired file is not fired again until its implicit
// hint has ended and the cool-down has passed.
type reactive struct {
	cfg Config

	mu    sync.Mutex
	files map[string]*openers
	// lastEvict and evictions: a full table is scanned at most once per evictEvery, not on
	// every open of a new file (with max-tracked fresh files that scan cost ~10,000 map reads
	// per open, in the co-process the NameNode's audit stream feeds).
	lastEvict time.Time
	evictions int
}

// evictEvery is the least time between two scans of a full table, as a fraction of the
// window: files become stale only as the window passes.
func (r *reactive) evictEvery() time.Duration {
	return r.cfg.ReactiveWindow / 8
}

type openers struct {
	// seen holds each distinct client (ip, user) with its last open inside the window: at
	// most K-1 entries before the file fires, so a slice scanned linearly is cheaper than a
	// map (no map and no ip|user key string allocated per audit event).
	seen     []opener
	blocked  bool // an implicit hint is pending or active
	coolTill time.Time
}

type opener struct {
	ip, user string
	at       time.Time
}

func newReactive(cfg Config) *reactive {
	return &reactive{cfg: cfg, files: map[string]*openers{}}
}

// observe records one open and reports whether it fires an implicit hint for src.
func (r *reactive) observe(src, user, ip string, t time.Time) (fire, dropped bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	o := r.files[src]
	if o == nil {
		if len(r.files) >= r.cfg.ReactiveMaxTracked {
			if r.evictions == 0 || t.Sub(r.lastEvict) >= r.evictEvery() || t.Before(r.lastEvict) {
				r.lastEvict = t
				r.evictions++
				r.evict(t)
			}
			if len(r.files) >= r.cfg.ReactiveMaxTracked {
				return false, true
			}
		}
		o = &openers{}
		r.files[src] = o
	}
	if o.blocked || t.Before(o.coolTill) {
		return false, false
	}
	cut := t.Add(-r.cfg.ReactiveWindow)
	kept, found := o.seen[:0], false
	for _, c := range o.seen {
		if c.ip == ip && c.user == user {
			c.at, found = t, true
		}
		if !c.at.Before(cut) {
			kept = append(kept, c)
		}
	}
	o.seen = kept
	if !found {
		o.seen = append(o.seen, opener{ip: ip, user: user, at: t})
	}
	if len(o.seen) < r.cfg.ReactiveClients {
		return false, false
	}
	o.blocked = true
	o.seen = nil
	return true, false
}

// evict forgets files with no open inside the window and nothing pending. Callers hold mu.
func (r *reactive) evict(t time.Time) {
	cut := t.Add(-r.cfg.ReactiveWindow)
	for p, o := range r.files {
		if o.blocked || t.Before(o.coolTill) {
			continue
		}
		stale := true
		for _, c := range o.seen {
			if !c.at.Before(cut) {
				stale = false
				break
			}
		}
		if stale {
			delete(r.files, p)
		}
	}
}

// ended starts the cool-down of p after its implicit hint ended or could not be created.
func (r *reactive) ended(p string, t time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if o := r.files[p]; o != nil {
		o.blocked = false
		o.coolTill = t.Add(r.cfg.ReactiveCooldown)
	}
}

// ObserveAudit takes one audit event from the NameNode. In reactive mode an "open" of a file
// under the allowed prefixes counts towards an implicit hint. It never blocks.
func (m *Manager) ObserveAudit(cmd, src, user, clientIP string, t time.Time) {
	if !m.cfg.Reactive || cmd != "open" || src == "" || src[0] != '/' {
		return
	}
	src = path.Clean(src)
	if !m.cfg.allowed(src) {
		return
	}
	m.mu.Lock()
	_, held := m.paths[src]
	m.mu.Unlock()
	if held {
		return // an explicit or implicit hint already covers it
	}
	fire, dropped := m.reactive.observe(src, user, clientIP, t)
	if dropped {
		m.metrics.reactiveDropped.Inc()
	}
	if !fire {
		return
	}
	select {
	case m.implicit <- src:
		m.metrics.reactiveTriggers.Inc()
	default:
		m.metrics.reactiveDropped.Inc()
		m.reactive.ended(src, t)
	}
}

// createImplicit turns a reactive trigger into a hint as the NameNode identity. K openers
// within W are the first of a storm, so it plans for 4·K readers.
func (m *Manager) createImplicit(ctx context.Context, p string) {
	req := Request{Paths: []string{p}, HotFor: m.cfg.ReactiveDuration, Readers: m.cfg.ReactiveClients * 4, User: ""}
	plan, err := m.create(ctx, req, true)
	if err != nil {
		m.log.Info("implicit hint not created", "path", p, "error", err)
		m.reactive.ended(p, m.now())
		return
	}
	m.log.Info("implicit hint", "hint", plan.HintID, "path", p)
}
