package mirror

import (
	"errors"
	"fmt"
	"os"
	"path"
	"sync"
)

// walkWidth is how many directories of a checkpoint are listed at once on dc-a.
const walkWidth = 8

// walkTree lists every file and directory below dir on dc-a as owner, several directories at
// once (a checkpoint of 2,000 files in 40 directories is 41 NameNode listings, which one at a
// time would sit on the commit's path). Paths are relative to dir. More than maxFiles files is
// ErrTooManyFiles; dir missing is os.ErrNotExist.
func (e *Engine) walkTree(owner, dir string, maxFiles int) (files, dirs map[string]os.FileInfo, err error) {
	files, dirs = map[string]os.FileInfo{}, map[string]os.FileInfo{}
	var (
		mu      sync.Mutex
		cond    = sync.NewCond(&mu)
		pending = []string{""}
		busy    int
		first   error
	)
	work := func() {
		cl, cerr := e.src.get(owner)
		healthy := cerr == nil
		defer func() {
			if cl != nil {
				e.src.put(owner, cl, healthy)
			}
		}()
		mu.Lock()
		defer mu.Unlock()
		if cerr != nil && first == nil {
			first = cerr
		}
		for {
			for len(pending) == 0 && busy > 0 && first == nil {
				cond.Wait()
			}
			if len(pending) == 0 || first != nil {
				cond.Broadcast()
				return
			}
			rel := pending[len(pending)-1]
			pending = pending[:len(pending)-1]
			busy++
			mu.Unlock()
			infos, rerr := cl.ReadDir(path.Join(dir, rel))
			mu.Lock()
			busy--
			if rerr != nil {
				healthy = !isConnErr(rerr)
				if first == nil {
					first = rerr
				}
				cond.Broadcast()
				return
			}
			for _, fi := range infos {
				r := path.Join(rel, fi.Name())
				if fi.IsDir() {
					dirs[r] = fi
					pending = append(pending, r)
					continue
				}
				files[r] = fi
			}
			if len(files) > maxFiles && first == nil {
				first = fmt.Errorf("%w: more than %d (newtricks.mirror.max-files)", ErrTooManyFiles, maxFiles)
			}
			cond.Broadcast()
		}
	}
	var wg sync.WaitGroup
	for i := 0; i < walkWidth; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); work() }()
	}
	wg.Wait()
	if first != nil {
		if errors.Is(first, os.ErrNotExist) {
			return nil, nil, first
		}
		return nil, nil, first
	}
	return files, dirs, nil
}
