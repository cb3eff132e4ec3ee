package testreq

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Cached returns a directory holding what gen writes, kept between test runs under
// $NEWTRICKS_CACHE (default ~/.cache/newtricks)/<name>/ and keyed by the SHA-256 of the
// files inputs (e.g. the generating script) and of extra (e.g. the reference package's
// version): a reference output that costs minutes of CPU is made once per machine and
// version, and made again as soon as the script or the reference changes. Only the
// reference is cached; the code under test always runs. Other keys of name are removed.
// NEWTRICKS_NO_TEST_CACHE=1 makes it afresh in a temporary directory.
func Cached(t testing.TB, name string, inputs []string, extra string, gen func(dir string) error) string {
	t.Helper()
	h := sha256.New()
	for _, f := range inputs {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("cache key of %s: %v", name, err)
		}
		fmt.Fprintf(h, "%s %d\n", filepath.Base(f), len(b))
		h.Write(b)
	}
	h.Write([]byte(extra))
	key := hex.EncodeToString(h.Sum(nil))[:16]
	if os.Getenv("NEWTRICKS_NO_TEST_CACHE") != "" {
		dir := t.TempDir()
		if err := gen(dir); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	root := os.Getenv("NEWTRICKS_CACHE")
	if root == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			t.Fatal(err)
		}
		root = filepath.Join(home, ".cache", "newtricks")
	}
	base := filepath.Join(root, name)
	dir := filepath.Join(base, key)
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
		return dir
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		t.Fatal(err)
	}
	tmp, err := os.MkdirTemp(base, "tmp-"+key+"-")
	if err != nil {
		t.Fatal(err)
	}
	if err := gen(tmp); err != nil {
		os.RemoveAll(tmp)
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, ".complete"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp) // another test process made it first
		if _, err := os.Stat(filepath.Join(dir, ".complete")); err != nil {
			t.Fatalf("cache %s: %v", dir, err)
		}
	}
	entries, _ := os.ReadDir(base)
	for _, e := range entries {
		if e.Name() != key && !strings.HasPrefix(e.Name(), "tmp-") {
			os.RemoveAll(filepath.Join(base, e.Name()))
		}
	}
	return dir
}
