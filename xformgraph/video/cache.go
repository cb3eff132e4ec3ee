package video

import (
	"container/list"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"os"
	"strings"
	"sync"
	"syscall"
)

// IndexCache keeps built indexes (MarshalBinary form) so that a clip opened again is not
// demuxed again. Get returns nil when it has nothing for key. A cached index is checked
// against the input it is used for (size, codec, dimensions; see OpenBytes) and rebuilt
// when it does not fit, so a stale entry costs a rebuild, never wrong frames.
type IndexCache interface {
	Get(key string) []byte
	Put(key string, index []byte)
}

// CacheKey names a clip for an IndexCache: the caller's name for it (a path or sample key),
// its size and the SHA-256 of its first and last 64 KiB (the container headers, which hold
// the sample tables of mp4 and the cues of matroska).
func CacheKey(name string, data []byte) string {
	const edge = 64 << 10
	h := sha256.New()
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(data)))
	h.Write(n[:])
	h.Write([]byte(name))
	h.Write([]byte{0})
	if len(data) <= 2*edge {
		h.Write(data)
	} else {
		h.Write(data[:edge])
		h.Write(data[len(data)-edge:])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// MemoryIndexCache is an in-process LRU IndexCache of at most n entries; safe for
// concurrent use.
type MemoryIndexCache struct {
	mu    sync.Mutex
	n     int
	ll    *list.List
	items map[string]*list.Element
}

type memEntry struct {
	key string
	b   []byte
}

// NewMemoryIndexCache returns an LRU cache holding up to n indexes.
func NewMemoryIndexCache(n int) *MemoryIndexCache {
	return &MemoryIndexCache{n: max(n, 1), ll: list.New(), items: map[string]*list.Element{}}
}

// Get implements IndexCache.
func (c *MemoryIndexCache) Get(key string) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[key]; ok {
		c.ll.MoveToFront(e)
		return e.Value.(*memEntry).b
	}
	return nil
}

// Put implements IndexCache.
func (c *MemoryIndexCache) Put(key string, b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[key]; ok {
		e.Value.(*memEntry).b = b
		c.ll.MoveToFront(e)
		return
	}
	c.items[key] = c.ll.PushFront(&memEntry{key, b})
	for c.ll.Len() > c.n {
		e := c.ll.Back()
		c.ll.Remove(e)
		delete(c.items, e.Value.(*memEntry).key)
	}
}

// Len is the number of cached indexes.
func (c *MemoryIndexCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len()
}

// XattrName is the extended attribute FileIndexCache stores an index in.
const XattrName = "user.newtricks.video-index"

// SidecarSuffix is appended to a clip's path for FileIndexCache's sidecar file, used where
// the file system refuses extended attributes.
const SidecarSuffix = ".ntvidx"

// FileIndexCache caches the index of the clip at Path beside it: in the extended attribute
// XattrName, or, where extended attributes are not supported (or too small), in the
// sidecar file Path+SidecarSuffix. Each holds "key\n" + index, so a clip rewritten in
// place (another key) is indexed again.
type FileIndexCache struct {
	Path string
}

// Get implements IndexCache.
func (c FileIndexCache) Get(key string) []byte {
	b, err := getXattr(c.Path, XattrName)
	if err != nil || len(b) == 0 {
		if b, err = os.ReadFile(c.Path + SidecarSuffix); err != nil {
			return nil
		}
	}
	k, ix, ok := strings.Cut(string(b), "\n")
	if !ok || k != key {
		return nil
	}
	return []byte(ix)
}

// Put implements IndexCache. Failures are ignored: the cache is an optimisation.
func (c FileIndexCache) Put(key string, index []byte) {
	b := append([]byte(key+"\n"), index...)
	if err := syscall.Setxattr(c.Path, XattrName, b, 0); err == nil {
		return
	}
	tmp := c.Path + SidecarSuffix + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err == nil {
		if os.Rename(tmp, c.Path+SidecarSuffix) != nil {
			os.Remove(tmp)
		}
	}
}

func getXattr(path, name string) ([]byte, error) {
	n, err := syscall.Getxattr(path, name, nil)
	if err != nil {
		return nil, err
	}
	if n <= 0 {
		return nil, errors.New("empty attribute")
	}
	b := make([]byte, n)
	n, err = syscall.Getxattr(path, name, b)
	if err != nil {
		return nil, err
	}
	return b[:n], nil
}
