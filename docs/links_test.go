package docs

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// repoFiles lists the files git tracks (plus untracked, not ignored ones), relative to the root.
func repoFiles(t *testing.T) (root string, files []string) {
	t.Helper()
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatalf("git rev-parse: %v (the docs check needs git and a checkout)", err)
	}
	root = strings.TrimSpace(string(out))
	out, err = exec.Command("git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	for _, f := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f != "" {
			files = append(files, f)
		}
	}
	return root, files
}

var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestMarkdownLinksStayInRepo: every relative Markdown link names a file or directory that
// exists in the repository.
// markdown returns the root and every Markdown file of the repository with its content
// (files deleted in the work tree left out).
func markdown(t *testing.T) (root string, docs map[string]string) {
	t.Helper()
	root, files := repoFiles(t)
	docs = map[string]string{}
	for _, f := range files {
		if !strings.HasSuffix(f, ".md") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			if os.IsNotExist(err) {
				continue // deleted in the work tree
			}
			t.Fatal(err)
		}
		docs[f] = string(b)
	}
	return root, docs
}

func TestMarkdownLinksStayInRepo(t *testing.T) {
	root, docs := markdown(t)
	n := 0
	for f, b := range docs {
		for _, m := range mdLink.FindAllStringSubmatch(b, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			target, _, _ = strings.Cut(target, "#")
			p := filepath.Clean(filepath.Join(root, filepath.Dir(f), target))
			n++
			if rel, err := filepath.Rel(root, p); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
				t.Errorf("%s: link %q leaves the repository", f, m[1])
				continue
			}
			if _, err := os.Stat(p); err != nil {
				t.Errorf("%s: link %q: %v", f, m[1], err)
			}
		}
	}
	if n == 0 {
		t.Fatal("no relative links found: the scan is broken")
	}
}

// outside matches references to the workspace this repository was built in rather than to
// the repository itself.
var outside = regexp.MustCompile(`\.\./shared\b|\bshared/(DESIGN|STYLE)\.md|/work/(main|shared|wt|notes)\b`)

// TestNoReferenceOutsideRepo: no tracked text file points outside the repository.
func TestNoReferenceOutsideRepo(t *testing.T) {
	root, files := repoFiles(t)
	for _, f := range files {
		switch filepath.Ext(f) {
		case ".md", ".go", ".java", ".proto", ".mk", ".xml", ".yml", ".yaml", ".sh", ".py", ".txt", ".json", "":
		default:
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			continue // deleted, or a directory (submodule)
		}
		if f == "docs/links_test.go" {
			continue // the pattern itself
		}
		for i, line := range strings.Split(string(b), "\n") {
			if outside.MatchString(line) {
				t.Errorf("%s:%d refers outside the repository: %s", f, i+1, strings.TrimSpace(line))
			}
		}
	}
}
