package hotspot

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/newtricks/newtricks/namenode-ext/nnhost"
)

// expansion is the result of resolving a hint's paths to files.
type expansion struct {
	files   []*nnhost.FileStatus
	skipped []Skipped
	// Listing entries looked at so far, and the bound (scanBudget): a glob or a directory tree
	// of millions of entries costs the NameNode at most that many, page by page.
	scanned, scanLimit int
	scanCut            bool
}

// listPage is the entries asked for per ListStatus page (the host's bound may be lower).
const listPage = 1000

// scanBudget bounds the listing entries one expansion looks at: every file it may keep
// (limit), their directories and glob misses, four times over.
func scanBudget(limit int) int { return 4*limit + 4*listPage }

// list pages through dir as user, calling fn for each entry until fn returns false, the
// directory ends, or the expansion's scan budget is spent (ex.scanCut). The host answers at
// most a bounded page per call (host.proto, ListStatus); a page that does not move on is an
// error, never a loop.
func (m *Manager) list(ctx context.Context, ex *expansion, dir, user string, fn func(*nnhost.FileStatus) bool) error {
	var after []byte
	for {
		page, err := m.host.ListStatus(ctx, dir, after, listPage, nnhost.AsUser(user))
		if err != nil {
			return err
		}
		for _, e := range page.Entries {
			if ex.scanned >= ex.scanLimit {
				ex.scanCut = true
				return nil
			}
			ex.scanned++
			if !fn(e) {
				return nil
			}
		}
		if !page.HasMore {
			return nil
		}
		if len(page.Entries) == 0 || len(page.LastName) == 0 || bytes.Equal(page.LastName, after) {
			return status.Errorf(codes.Internal, "list %s: the host said has_more without moving on", dir)
		}
		after = page.LastName
	}
}

// expand resolves paths (files, directories, globs) to at most limit distinct files, listing
// and stating as user so HDFS enforces traverse and read permission. Per-path problems become
// skipped entries; only a transient host failure is an error (nothing has been changed yet).
func (m *Manager) expand(ctx context.Context, paths []string, user string, limit int) (*expansion, error) {
	ex := &expansion{scanLimit: scanBudget(limit)}
	seen := map[string]bool{}
	truncated := 0
	add := func(st *nnhost.FileStatus) {
		if seen[st.Path] {
			return
		}
		if len(ex.files) >= limit {
			truncated++
			return
		}
		seen[st.Path] = true
		ex.files = append(ex.files, st)
	}
	for _, raw := range paths {
		p := path.Clean(raw)
		if !m.cfg.allowed(globRoot(p)) {
			ex.skipped = append(ex.skipped, Skipped{p, SkipOutside,
				fmt.Sprintf("not under an allowed prefix (%s)", strings.Join(m.cfg.AllowedPrefixes, ", "))})
			continue
		}
		matches, skip, err := m.glob(ctx, ex, p, user)
		if err != nil {
			return nil, err
		}
		if skip != nil {
			ex.skipped = append(ex.skipped, *skip)
			continue
		}
		for _, st := range matches {
			if !m.cfg.allowed(st.Path) {
				ex.skipped = append(ex.skipped, Skipped{st.Path, SkipOutside, "not under an allowed prefix"})
				continue
			}
			if !st.IsDir {
				add(st)
				continue
			}
			if err := m.walk(ctx, ex, st.Path, user, func(f *nnhost.FileStatus) bool {
				add(f)
				return truncated == 0 // one file past the limit proves there are more
			}, &ex.skipped); err != nil {
				return nil, err
			}
		}
	}
	if ex.scanCut {
		ex.skipped = append(ex.skipped, Skipped{"", SkipTooMany,
			fmt.Sprintf("expansion stopped after looking at %d entries (4 x newtricks.hotspot.max-files + %d); further files left out", ex.scanLimit, 4*listPage)})
	}
	if truncated > 0 {
		ex.skipped = append(ex.skipped, Skipped{"", SkipTooMany,
			fmt.Sprintf("expansion stopped at %d files (newtricks.hotspot.max-files); further files left out", limit)})
	}
	return ex, nil
}

// globRoot returns the part of p before its first glob component.
func globRoot(p string) string {
	parts := strings.Split(p, "/")
	for i, c := range parts {
		if hasMeta(c) {
			if i <= 1 {
				return "/"
			}
			return strings.Join(parts[:i], "/")
		}
	}
	return p
}

func hasMeta(s string) bool { return strings.ContainsAny(s, "*?[\\") }

// glob resolves p, whose components may hold glob patterns, to existing paths with status.
func (m *Manager) glob(ctx context.Context, ex *expansion, p, user string) ([]*nnhost.FileStatus, *Skipped, error) {
	if !hasMeta(p) {
		st, err := m.host.GetFileStatus(ctx, p, nnhost.AsUser(user))
		if err != nil {
			return nil, m.skipFor(p, err), m.transient("stat "+p, err)
		}
		if st.Path == "" {
			st.Path = p
		}
		return []*nnhost.FileStatus{st}, nil, nil
	}
	cur := []*nnhost.FileStatus{{Path: "/", IsDir: true}}
	comps := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for i, comp := range comps {
		var next []*nnhost.FileStatus
		last := i == len(comps)-1
		for _, dir := range cur {
			if !dir.IsDir {
				continue
			}
			if !hasMeta(comp) {
				child := path.Join(dir.Path, comp)
				st, err := m.host.GetFileStatus(ctx, child, nnhost.AsUser(user))
				if err != nil {
					if terr := m.transient("stat "+child, err); terr != nil {
						return nil, nil, terr
					}
					if hostCode(err) == codes.PermissionDenied {
						return nil, m.skipFor(child, err), nil
					}
					continue
				}
				st.Path = child
				next = append(next, st)
				continue
			}
			err := m.list(ctx, ex, dir.Path, user, func(e *nnhost.FileStatus) bool {
				e.Path = childPath(dir.Path, e.Path)
				if ok, _ := path.Match(comp, path.Base(e.Path)); ok && (last || e.IsDir) {
					next = append(next, e)
				}
				return true
			})
			if err != nil {
				if terr := m.transient("list "+dir.Path, err); terr != nil {
					return nil, nil, terr
				}
				if hostCode(err) == codes.PermissionDenied {
					return nil, m.skipFor(dir.Path, err), nil
				}
				continue
			}
		}
		cur = next
	}
	if len(cur) == 0 {
		return nil, &Skipped{p, SkipNotFound, "glob matches nothing"}, nil
	}
	return cur, nil, nil
}

// walk lists dir recursively as user, calling fn for every file until fn returns false.
// The queue of directories still to list holds only entries the scan budget paid for.
func (m *Manager) walk(ctx context.Context, ex *expansion, dir, user string, fn func(*nnhost.FileStatus) bool, skipped *[]Skipped) error {
	queue := []string{dir}
	stop := false
	for len(queue) > 0 && !stop && !ex.scanCut {
		d := queue[0]
		queue = queue[1:]
		err := m.list(ctx, ex, d, user, func(e *nnhost.FileStatus) bool {
			e.Path = childPath(d, e.Path)
			if e.IsDir {
				queue = append(queue, e.Path)
				return true
			}
			if !fn(e) {
				stop = true
			}
			return !stop
		})
		if err != nil {
			if terr := m.transient("list "+d, err); terr != nil {
				return terr
			}
			*skipped = append(*skipped, *m.skipFor(d, err))
			continue
		}
	}
	return nil
}

// childPath accepts a listing entry's path as the host returns it: absolute, or a bare name.
func childPath(dir, p string) string {
	if strings.HasPrefix(p, "/") {
		return path.Clean(p)
	}
	return path.Join(dir, p)
}

// skipFor turns a host error about p into a skipped entry.
func (m *Manager) skipFor(p string, err error) *Skipped {
	switch hostCode(err) {
	case codes.OK:
		return nil
	case codes.NotFound:
		return &Skipped{p, SkipNotFound, "no such file or directory"}
	case codes.PermissionDenied:
		return &Skipped{p, SkipPermission, "permission denied: " + hostMessage(err)}
	case codes.ResourceExhausted:
		return &Skipped{p, SkipQuota, hostMessage(err)}
	}
	return &Skipped{p, SkipHostError, hostMessage(err)}
}

// transient returns a wrapped ErrUnavailable if err is a transient host failure, else nil.
func (m *Manager) transient(op string, err error) error {
	if err == nil || !hostRetryable(err) {
		return nil
	}
	m.metrics.hostErrors.WithLabelValues(strings.Fields(op)[0]).Inc()
	return fmt.Errorf("%s: %w: %v", op, ErrUnavailable, err)
}
