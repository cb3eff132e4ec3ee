package docs

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const module = "github.com/newtricks/newtricks/"

// goImports returns, for every package of the module, the module packages it imports (tests
// excluded: a test may reach anything).
func goImports(t *testing.T, root string) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v (the layout check needs the go tool)", err)
	}
	deps := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg := strings.TrimPrefix(f[0], module)
		deps[pkg] = nil
		for _, imp := range f[1:] {
			if strings.HasPrefix(imp, module) {
				deps[pkg] = append(deps[pkg], strings.TrimPrefix(imp, module))
			}
		}
	}
	return deps
}

func under(pkg string, trees ...string) bool {
	for _, t := range trees {
		if pkg == t || strings.HasPrefix(pkg, t+"/") {
			return true
		}
	}
	return false
}

// TestLayering: the import graph reads top to bottom. The libraries the co-processes and the
// trainer share (xformgraph, schedule, dataset, internal) import nothing of the reader, the
// co-processes, the programs or the harness; the co-processes import no program and no harness;
// no shipped program links one of the module's test helper packages (a name ending in "test").
func TestLayering(t *testing.T) {
	root, _ := repoFiles(t)
	deps := goImports(t, root)
	if len(deps) < 20 {
		t.Fatalf("go list found %d packages: the scan is broken", len(deps))
	}
	above := map[string][]string{
		"xformgraph":   {"schedule", "dataset", "reader", "namenode-ext", "datanode-ext", "cmd", "harness", "internal", "bench", "conformance"},
		"schedule":     {"dataset", "reader", "namenode-ext", "datanode-ext", "cmd", "harness", "internal", "bench", "conformance"},
		"dataset":      {"reader", "namenode-ext", "datanode-ext", "cmd", "harness", "bench", "conformance"},
		"internal":     {"xformgraph", "schedule", "dataset", "reader", "namenode-ext", "datanode-ext", "cmd", "harness", "bench", "conformance"},
		"reader":       {"namenode-ext", "datanode-ext", "cmd", "harness", "bench", "conformance"},
		"namenode-ext": {"datanode-ext", "cmd", "harness", "bench", "conformance", "reader"},
		"datanode-ext": {"namenode-ext", "cmd", "harness", "bench", "conformance", "reader"},
		"harness":      {"cmd", "bench", "conformance"},
	}
	for pkg, imps := range deps {
		for tree, banned := range above {
			if !under(pkg, tree) {
				continue
			}
			for _, imp := range imps {
				// A co-process's own main may import its own packages.
				if under(imp, banned...) && !(strings.Contains(pkg, "/cmd/") && under(imp, tree)) {
					t.Errorf("%s imports %s: %s sits below %s", pkg, imp, tree, imp)
				}
			}
		}
	}

	for _, prog := range []string{"cmd/newtricks", "cmd/libnewtricks", "namenode-ext/cmd/namenode-ext", "datanode-ext/cmd/datanode-ext"} {
		if _, ok := deps[prog]; !ok {
			t.Errorf("program %s not found", prog)
			continue
		}
		seen := map[string]bool{}
		var walk func(p string, path []string)
		walk = func(p string, path []string) {
			if seen[p] {
				return
			}
			seen[p] = true
			if strings.HasSuffix(p, "test") {
				t.Errorf("%s links the test helper package %s (%s)", prog, p, strings.Join(append(path, p), " -> "))
			}
			for _, d := range deps[p] {
				walk(d, append(path, p))
			}
		}
		walk(prog, nil)
	}
}

// docPath matches a backquoted repository path in the docs' prose and code maps.
var docPath = regexp.MustCompile("`((?:bench|cmd|conformance|dataset|datanode-ext|docker-compose|docs|examples|hadoop-patches|harness|internal|namenode-ext|proto|python|reader|schedule|xformgraph)/[A-Za-z0-9_./-]*)`")

// TestDocPathsExist: every repository path the docs name in backquotes exists (or lies in a
// directory the build generates), so the code maps follow the layout.
func TestDocPathsExist(t *testing.T) {
	root, docs := markdown(t)
	n := 0
	for f, b := range docs {
		for _, m := range docPath.FindAllStringSubmatch(b, -1) {
			p := strings.TrimRight(m[1], ".")
			if i := strings.Index(p, "..."); i >= 0 {
				p = p[:i] // "hadoop-patches/.../X.java": the prefix must exist
			}
			p = strings.TrimSuffix(p, "/")
			if i := strings.LastIndex(p, "."); i > strings.LastIndex(p, "/") && i+1 < len(p) && p[i+1] >= 'A' && p[i+1] <= 'Z' {
				p = p[:i] // "xformgraph/image.Image": a Go name in its package
			}
			n++
			if _, err := os.Stat(filepath.Join(root, p)); err == nil {
				continue
			}
			if matches, _ := filepath.Glob(filepath.Join(root, p) + "*"); len(matches) > 0 {
				continue // a prefix: "bench/xform/run" for run.sh, "proto/newtricks/v1/*.proto"
			}
			if exec.Command("git", "-C", root, "check-ignore", "-q", p).Run() == nil {
				continue // generated (test media, build output)
			}
			t.Errorf("%s names `%s`, which does not exist", f, m[1])
		}
	}
	if n == 0 {
		t.Fatal("no repository paths found in the docs: the scan is broken")
	}
}
