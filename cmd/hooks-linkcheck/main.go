// Command hooks-linkcheck checks that the hooks jar links against a Hadoop release: every
// Hadoop (and ZooKeeper) class, method and field the hooks' byte code names exists in that
// release's jars, looked up the way the JVM resolves it (the owner, then its superclasses and
// interfaces, default methods included), and every hook class that extends or implements a
// Hadoop type implements all of that type's abstract methods there (a JournalManager or
// audit logger method added by a release would otherwise throw AbstractMethodError when the
// NameNode calls it). It reads the byte code with the JDK's javap.
//
//	go run ./cmd/hooks-linkcheck -jar hadoop-patches/target/newtricks-hadoop-hooks.jar \
//	  -lib ~/.cache/newtricks/hadoop-3.3.6/lib
//
// Exit status 1 lists what is missing. Reflection (getDeclaredMethod by name) is not seen;
// the hooks guard each such use at run time.
package main

import (
	"archive/zip"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

func main() {
	jar := flag.String("jar", "hadoop-patches/target/newtricks-hadoop-hooks.jar", "the hooks jar")
	lib := flag.String("lib", "", "a Hadoop release's jar directory (make hadoop HADOOP_VERSION=...)")
	javap := flag.String("javap", "javap", "the JDK's javap")
	flag.Parse()
	if *lib == "" {
		fmt.Fprintln(os.Stderr, "hooks-linkcheck: -lib is required")
		os.Exit(2)
	}
	rep, err := check(*jar, *lib, *javap)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hooks-linkcheck:", err)
		os.Exit(2)
	}
	fmt.Printf("hooks-linkcheck %s: %d references and %d overridden types checked, %d missing\n",
		*lib, rep.refs, rep.types, len(rep.missing))
	for _, m := range rep.missing {
		fmt.Println("  MISSING", m)
	}
	if len(rep.missing) > 0 {
		os.Exit(1)
	}
}

// hookPrefixes are the hooks' own classes inside the jar (not the shaded libraries).
var hookPrefixes = []string{"io/newtricks/hadoop/", "org/apache/hadoop/"}

// checkedPrefixes are the owners whose members are looked up in the release.
var checkedPrefixes = []string{"org/apache/hadoop/", "org/apache/zookeeper/"}

type report struct {
	refs, types int
	missing     []string
}

func check(jar, lib, javap string) (report, error) {
	var rep report
	tmp, err := os.MkdirTemp("", "hooks-linkcheck-")
	if err != nil {
		return rep, err
	}
	defer os.RemoveAll(tmp)
	classes, err := extract(jar, tmp)
	if err != nil {
		return rep, err
	}
	if len(classes) == 0 {
		return rep, fmt.Errorf("%s holds no hook classes", jar)
	}
	var refs []ref
	var names []string
	for i := 0; i < len(classes); i += 60 {
		end := min(i+60, len(classes))
		out, err := run(javap, append([]string{"-v"}, classes[i:end]...)...)
		if err != nil {
			return rep, err
		}
		refs = append(refs, parseRefs(out)...)
	}
	for _, c := range classes {
		rel, _ := filepath.Rel(tmp, c)
		names = append(names, strings.TrimSuffix(filepath.ToSlash(rel), ".class"))
	}
	// The hooks' own classes come first on the classpath, then the release's jars (and the
	// JDK's, which javap always sees).
	cp := tmp + string(os.PathListSeparator) + filepath.Join(lib, "*")
	db := &classDB{javap: javap, cp: cp, classes: map[string]*classInfo{}}
	owners := append([]string(nil), names...)
	for _, r := range refs {
		owners = append(owners, r.owner)
	}
	if err := db.load(owners); err != nil {
		return rep, err
	}
	return analyze(db, refs, names), nil
}

// analyze checks refs and the hook classes names against the loaded classes.
func analyze(db *classDB, refs []ref, names []string) report {
	var rep report
	var ours []*classInfo
	for _, n := range names {
		if c := db.get(n); c != nil {
			ours = append(ours, c)
		}
	}
	seen, missing := map[string]bool{}, map[string]bool{}
	for _, r := range refs {
		if !hasPrefix(r.owner, checkedPrefixes) || seen[r.String()] {
			continue
		}
		seen[r.String()] = true
		rep.refs++
		switch {
		case db.get(r.owner) == nil:
			missing["class "+r.owner+" (named by the hooks)"] = true
		case r.kind != "Class" && db.find(r.owner, r.name, r.desc) == nil:
			missing[r.String()] = true
		}
	}
	for _, c := range ours {
		if c.abstract || c.iface || !db.hasAncestor(c.name, checkedPrefixes) {
			continue
		}
		rep.types++
		for _, m := range db.abstractMethods(c.name) {
			if impl := db.find(c.name, m.name, m.desc); impl == nil || impl.abstract {
				missing[fmt.Sprintf("%s does not implement %s.%s%s", c.name, m.owner, m.name, m.desc)] = true
			}
		}
	}
	for m := range missing {
		rep.missing = append(rep.missing, m)
	}
	sort.Strings(rep.missing)
	return rep
}

// extract writes the hook classes of jar under dir and returns their paths.
func extract(jar, dir string) ([]string, error) {
	z, err := zip.OpenReader(jar)
	if err != nil {
		return nil, err
	}
	defer z.Close()
	var out []string
	for _, f := range z.File {
		if !strings.HasSuffix(f.Name, ".class") || !hasPrefix(f.Name, hookPrefixes) {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		r, err := f.Open()
		if err != nil {
			return nil, err
		}
		w, err := os.Create(p)
		if err == nil {
			_, err = io.Copy(w, r)
			if cerr := w.Close(); err == nil {
				err = cerr
			}
		}
		r.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	sort.Strings(out)
	return out, nil
}

func run(javap string, args ...string) (string, error) {
	cmd := exec.Command(javap, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil && len(out) == 0 {
		return "", fmt.Errorf("%s: %v: %s", javap, err, stderr.String())
	}
	// javap exits 1 when some class was not found but prints the others: callers see which.
	return string(out), nil
}

func hasPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// ref is one constant-pool reference of the hooks' byte code.
type ref struct {
	kind              string // Methodref, InterfaceMethodref, Fieldref, Class
	owner, name, desc string
}

func (r ref) String() string {
	if r.kind == "Class" {
		return "class " + r.owner
	}
	return fmt.Sprintf("%s %s.%s%s", r.kind, r.owner, r.name, r.desc)
}

var (
	memberRefRE = regexp.MustCompile(`= (Methodref|InterfaceMethodref|Fieldref)\s+#\d+\.#\d+\s+// (\S+?)\.("?[^":]+"?):(\S+)`)
	classRefRE  = regexp.MustCompile(`= Class\s+#\d+\s+// (\S+)`)
)

// parseRefs reads the constant pools of `javap -v` output.
func parseRefs(out string) []ref {
	var refs []ref
	for _, m := range memberRefRE.FindAllStringSubmatch(out, -1) {
		refs = append(refs, ref{kind: m[1], owner: strings.Trim(m[2], `"`), name: strings.Trim(m[3], `"`), desc: m[4]})
	}
	for _, m := range classRefRE.FindAllStringSubmatch(out, -1) {
		c := strings.Trim(m[1], `"`)
		c = strings.TrimLeft(c, "[")
		if strings.HasPrefix(c, "L") && strings.HasSuffix(c, ";") {
			c = c[1 : len(c)-1]
		}
		refs = append(refs, ref{kind: "Class", owner: c})
	}
	return refs
}

// classInfo is what javap -p -s says about one class.
type classInfo struct {
	name            string // internal form, a/b/C
	supers          []string
	iface, abstract bool
	members         []member
}

type member struct {
	owner, name, desc string
	abstract, static  bool
}

var headerRE = regexp.MustCompile(`^((?:public |protected |private |abstract |final |static |sealed |non-sealed |strictfp |synchronized )*)(class|interface|enum) (\S+)(.*)\{$`)

// parseClasses reads `javap -p -s` (or -v) output of one or more classes.
func parseClasses(out string) []*classInfo {
	var all []*classInfo
	var cur *classInfo
	var pending *member
	for _, raw := range strings.Split(out, "\n") {
		line := strings.TrimSpace(raw)
		if m := headerRE.FindStringSubmatch(stripGenerics(line)); m != nil && !strings.HasPrefix(raw, " ") {
			cur = &classInfo{name: strings.ReplaceAll(m[3], ".", "/"), iface: m[2] == "interface",
				abstract: strings.Contains(m[1], "abstract")}
			rest := m[4]
			ext, impl := rest, ""
			if i := strings.Index(rest, " implements "); i >= 0 {
				ext, impl = rest[:i], rest[i+len(" implements "):]
			}
			for _, part := range []string{strings.TrimPrefix(strings.TrimSpace(ext), "extends "), impl} {
				for _, s := range strings.Split(part, ",") {
					if s = strings.TrimSpace(s); s != "" {
						cur.supers = append(cur.supers, strings.ReplaceAll(s, ".", "/"))
					}
				}
			}
			if cur.iface {
				// An interface's "extends" lists interfaces; Object is every class's root.
			} else if len(cur.supers) == 0 || strings.HasPrefix(strings.TrimSpace(rest), "implements") {
				cur.supers = append([]string{"java/lang/Object"}, cur.supers...)
			}
			all = append(all, cur)
			pending = nil
			continue
		}
		if cur == nil {
			continue
		}
		if d, ok := strings.CutPrefix(line, "descriptor: "); ok && pending != nil {
			pending.desc = d
			cur.members = append(cur.members, *pending)
			pending = nil
			continue
		}
		if !strings.HasSuffix(line, ";") {
			continue
		}
		decl := stripGenerics(strings.TrimSuffix(line, ";"))
		if i := strings.Index(decl, " throws "); i >= 0 {
			decl = decl[:i]
		}
		mods := decl
		m := member{owner: cur.name}
		if i := strings.IndexByte(decl, '('); i >= 0 {
			head := strings.Fields(decl[:i])
			if len(head) == 0 {
				continue
			}
			m.name = head[len(head)-1]
			if strings.ReplaceAll(m.name, ".", "/") == cur.name {
				m.name = "<init>"
			}
			mods = decl[:i]
		} else if decl == "static {}" {
			m.name = "<clinit>"
		} else {
			f := strings.Fields(decl)
			if len(f) == 0 {
				continue
			}
			m.name = f[len(f)-1]
		}
		m.abstract = strings.Contains(" "+mods, " abstract ") || (cur.iface && !strings.Contains(" "+mods, " default ") && !strings.Contains(" "+mods, " static ") && strings.Contains(decl, "("))
		m.static = strings.Contains(" "+mods, " static ")
		pending = &m
	}
	return all
}

// stripGenerics removes every <...> (nested) from s.
func stripGenerics(s string) string {
	var b strings.Builder
	depth := 0
	for _, r := range s {
		switch {
		case r == '<':
			depth++
		case r == '>' && depth > 0:
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// classDB holds the classes javap found on the release's classpath (and the JDK's).
type classDB struct {
	javap, cp string
	classes   map[string]*classInfo // nil value: looked up, not found
}

func (db *classDB) get(name string) *classInfo { return db.classes[name] }

// load looks up names and, transitively, their supertypes.
func (db *classDB) load(names []string) error {
	for len(names) > 0 {
		var todo []string
		seen := map[string]bool{}
		for _, n := range names {
			if _, ok := db.classes[n]; !ok && !seen[n] {
				seen[n] = true
				todo = append(todo, n)
			}
		}
		if len(todo) == 0 {
			return nil
		}
		sort.Strings(todo)
		for i := 0; i < len(todo); i += 200 {
			batch := todo[i:min(i+200, len(todo))]
			args := []string{"-p", "-s", "-cp", db.cp}
			for _, n := range batch {
				args = append(args, strings.ReplaceAll(n, "/", "."))
			}
			out, err := run(db.javap, args...)
			if err != nil {
				return err
			}
			for _, c := range parseClasses(out) {
				db.classes[c.name] = c
			}
			for _, n := range batch {
				if _, ok := db.classes[n]; !ok {
					db.classes[n] = nil
				}
			}
		}
		names = nil
		for _, n := range todo {
			if c := db.classes[n]; c != nil {
				names = append(names, c.supers...)
			}
		}
	}
	return nil
}

// find resolves a member as the JVM does: the class, its superclasses, then its interfaces.
func (db *classDB) find(owner, name, desc string) *member {
	seen := map[string]bool{}
	var walk func(string) *member
	walk = func(cls string) *member {
		if seen[cls] {
			return nil
		}
		seen[cls] = true
		c := db.get(cls)
		if c == nil {
			return nil
		}
		for i := range c.members {
			m := &c.members[i]
			if m.name == name && m.desc == desc {
				return m
			}
		}
		if name == "<init>" {
			return nil
		}
		var abstractHit *member
		for _, s := range c.supers {
			if m := walk(s); m != nil {
				if !m.abstract {
					return m
				}
				abstractHit = m
			}
		}
		return abstractHit
	}
	return walk(owner)
}

// hasAncestor reports whether a supertype of cls (transitively) has one of the prefixes.
func (db *classDB) hasAncestor(cls string, prefixes []string) bool {
	seen := map[string]bool{}
	var walk func(string) bool
	walk = func(n string) bool {
		if seen[n] {
			return false
		}
		seen[n] = true
		c := db.get(n)
		if c == nil {
			return false
		}
		for _, s := range c.supers {
			if hasPrefix(s, prefixes) || walk(s) {
				return true
			}
		}
		return false
	}
	return walk(cls)
}

// abstractMethods lists the abstract methods of cls's supertypes (transitively).
func (db *classDB) abstractMethods(cls string) []member {
	var out []member
	seen := map[string]bool{}
	var walk func(string)
	walk = func(n string) {
		if seen[n] {
			return
		}
		seen[n] = true
		c := db.get(n)
		if c == nil {
			return
		}
		if n != cls {
			for _, m := range c.members {
				if m.abstract && !m.static {
					out = append(out, m)
				}
			}
		}
		for _, s := range c.supers {
			walk(s)
		}
	}
	walk(cls)
	return out
}
