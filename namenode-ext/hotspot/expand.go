package hotspot

import (
	"context"
	"fmt"
	"path"
	"strings"

	"google.golang.org/grpc/codes"

	"github.com/newtricks/newtricks/namenode-ext/nnhost"
)

// expansion is the result of resolving a hint's paths to files.
type expansion struct {
	files   []*nnhost.FileStatus
	skipped []Skipped
}

// expand resolves paths (files, directories, globs) to at most limit distinct files, listing
// and stating as user so HDFS enforces traverse and read permission. Per-path problems become
// skipped entries; only a transient host failure is an error (nothing has been changed yet).
func (m *Manager) expand(ctx context.Context, paths []string, user string, limit int) (*expansion, error) {
	ex := &expansion{}
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
		matches, skip, err := m.glob(ctx, p, user)
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
			if err := m.walk(ctx, st.Path, user, func(f *nnhost.FileStatus) bool {
				add(f)
				return truncated == 0 // one file past the limit proves there are more
			}, &ex.skipped); err != nil {
				return nil, err
			}
		}
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
func (m *Manager) glob(ctx context.Context, p, user string) ([]*nnhost.FileStatus, *Skipped, error) {
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
			entries, err := m.host.ListStatus(ctx, dir.Path, nnhost.AsUser(user))
			if err != nil {
				if terr := m.transient("list "+dir.Path, err); terr != nil {
					return nil, nil, terr
				}
				if hostCode(err) == codes.PermissionDenied {
					return nil, m.skipFor(dir.Path, err), nil
				}
				continue
			}
			for _, e := range entries {
				e.Path = childPath(dir.Path, e.Path)
				if ok, _ := path.Match(comp, path.Base(e.Path)); ok && (last || e.IsDir) {
					next = append(next, e)
				}
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
func (m *Manager) walk(ctx context.Context, dir, user string, fn func(*nnhost.FileStatus) bool, skipped *[]Skipped) error {
	queue := []string{dir}
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		entries, err := m.host.ListStatus(ctx, d, nnhost.AsUser(user))
		if err != nil {
			if terr := m.transient("list "+d, err); terr != nil {
				return terr
			}
			*skipped = append(*skipped, *m.skipFor(d, err))
			continue
		}
		for _, e := range entries {
			e.Path = childPath(d, e.Path)
			if e.IsDir {
				queue = append(queue, e.Path)
				continue
			}
			if !fn(e) {
				return nil
			}
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
