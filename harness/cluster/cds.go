package cluster

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Class data sharing (AppCDS) cuts a daemon's start-up CPU by about 40% (measured here:
// NameNode to RPC-ready in 2.1 s of CPU instead of 3.6 s): the JVM maps the Hadoop classes
// from an archive instead of loading and verifying them from 114 jars.
//
// The archive depends on the java binary and the exact jars, so it lives next to the jars
// under a key of both. The first Start without one records the classes that the NameNode
// and DataNode 0 load (-XX:DumpLoadedClassList) and, once the cluster is ready, dumps the
// archive in the background (java -Xshare:dump, niced, written to a temporary file and
// renamed). Later starts use it. The JVM checks the archive itself and silently falls back
// to normal loading if it does not match (-Xshare:auto, the default), so a stale archive
// costs speed, never correctness. The conf dir goes last on the classpath because CDS
// requires the archived classpath to be a prefix of the runtime one (no Hadoop jar holds a
// *-site.xml or log4j.properties, so the order does not change what is loaded).

// cdsPaths returns the archive and the lock file for spec, or "" if the key cannot be
// computed (then CDS is not used).
func cdsPaths(spec launchSpec) (archive, lock string) {
	java, err := exec.LookPath(spec.Java)
	if err != nil {
		return "", ""
	}
	if real, err := filepath.EvalSymlinks(java); err == nil {
		java = real
	}
	h := sha256.New()
	fmt.Fprintln(h, java, spec.HadoopLib)
	if st, err := os.Stat(java); err == nil {
		fmt.Fprintln(h, st.Size(), st.ModTime().UnixNano())
	}
	ents, err := os.ReadDir(spec.HadoopLib)
	if err != nil {
		return "", ""
	}
	for _, e := range ents {
		if info, err := e.Info(); err == nil && strings.HasSuffix(e.Name(), ".jar") {
			fmt.Fprintln(h, e.Name(), info.Size(), info.ModTime().UnixNano())
		}
	}
	key := hex.EncodeToString(h.Sum(nil))[:16]
	dir := filepath.Join(filepath.Dir(spec.HadoopLib), "cds")
	return filepath.Join(dir, "hadoop-"+key+".jsa"), filepath.Join(dir, "hadoop-"+key+".lock")
}

// cdsState is what one Start decided about class data sharing.
type cdsState struct {
	archive string // use this archive (exists)
	// record: no archive yet; these daemons write their loaded class lists.
	record  map[Daemon]string
	target  string // archive to create
	lock    string
	builder *process // the running dump, if any
}

// planCDS decides, for a new cluster, whether to use an archive or record class lists (of
// NameNode nn, NameNode or HANameNode(0), and DataNode 0).
func planCDS(spec launchSpec, disabled bool, baseDir string, nn Daemon) *cdsState {
	if disabled {
		return &cdsState{}
	}
	archive, lock := cdsPaths(spec)
	if archive == "" {
		return &cdsState{}
	}
	if _, err := os.Stat(archive); err == nil {
		return &cdsState{archive: archive}
	}
	if st, err := os.Stat(lock); err == nil && time.Since(st.ModTime()) < 5*time.Minute {
		return &cdsState{} // another process is building it right now
	}
	return &cdsState{
		target: archive,
		lock:   lock,
		record: map[Daemon]string{
			nn:          filepath.Join(baseDir, string(nn), "classes.lst"),
			DataNode(0): filepath.Join(baseDir, string(DataNode(0)), "classes.lst"),
		},
	}
}

// jvmOptions are the CDS options for daemon d.
func (s *cdsState) jvmOptions(d Daemon) []string {
	if s == nil {
		return nil
	}
	if s.archive != "" {
		return []string{"-XX:SharedArchiveFile=" + s.archive}
	}
	if f, ok := s.record[d]; ok {
		return []string{"-XX:DumpLoadedClassList=" + f}
	}
	return nil
}

// mergeClassLists writes the union of the plain class names in lists to out. Lines with
// attributes (classes of custom loaders, lambda forms) are dropped; so is a last line that
// a running JVM may not have finished.
func mergeClassLists(out string, lists ...string) (int, error) {
	seen := map[string]bool{}
	for _, l := range lists {
		b, err := os.ReadFile(l)
		if err != nil {
			continue
		}
		text := string(b)
		if i := strings.LastIndexByte(text, '\n'); i >= 0 {
			text = text[:i]
		}
		sc := bufio.NewScanner(strings.NewReader(text))
		sc.Buffer(make([]byte, 1<<16), 1<<20)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if line == "" || line[0] == '#' || line[0] == '@' || strings.ContainsAny(line, " \t") {
				continue
			}
			seen[line] = true
		}
	}
	if len(seen) == 0 {
		return 0, fmt.Errorf("no classes recorded in %v", lists)
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return len(names), os.WriteFile(out, []byte(strings.Join(names, "\n")+"\n"), 0o644)
}

// startBuild merges the recorded class lists and starts the (niced) archive dump. The dump
// runs as a shell pipeline that publishes the archive by rename and removes the lock, so
// it completes even if a detached caller (the CLI) exits first; Stop waits for it.
func (c *Cluster) startCDSBuild() {
	s := c.cds
	if s == nil || s.target == "" {
		return
	}
	if err := os.MkdirAll(filepath.Dir(s.target), 0o755); err != nil {
		return
	}
	f, err := os.OpenFile(s.lock, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		// Stale lock from a killed build: take it over.
		if st, serr := os.Stat(s.lock); serr != nil || time.Since(st.ModTime()) < 5*time.Minute {
			return
		}
		if f, err = os.OpenFile(s.lock, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644); err != nil {
			return
		}
	}
	fmt.Fprintf(f, "%d %s\n", os.Getpid(), c.cfg.BaseDir)
	f.Close()
	if _, err := os.Stat(s.target); err == nil {
		os.Remove(s.lock) // another cluster built it while this one started
		return
	}
	list := s.target + ".classlist"
	var lists []string
	for _, l := range s.record {
		lists = append(lists, l)
	}
	sort.Strings(lists)
	if _, err := mergeClassLists(list, lists...); err != nil {
		os.Remove(s.lock)
		return
	}
	tmp := s.target + ".tmp"
	nice := ""
	if _, err := exec.LookPath("nice"); err == nil {
		nice = "nice -n 10 "
	}
	// Once published, archives of earlier jar sets of this lib dir (a re-resolved runtime) are
	// removed after an hour: nothing starts from them any more, and each is ~75 MB. A JVM that
	// still maps one keeps it until it exits.
	script := fmt.Sprintf(`%s%q -Xshare:dump -XX:SharedClassListFile=%q -XX:SharedArchiveFile=%q -cp %q -Xlog:cds=error && mv -f %q %q && find %q -maxdepth 1 -name 'hadoop-*.jsa' ! -name %q -mmin +60 -delete; rm -f %q %q %q`,
		nice, c.spec.Java, list, tmp, filepath.Join(c.spec.HadoopLib, "*"), tmp, s.target,
		filepath.Dir(s.target), filepath.Base(s.target), tmp, list, s.lock)
	// The command line names the base dir so Stop and the orphan checks see it as ours.
	cmd := exec.Command("sh", "-c", script, "cds-dump", c.marker())
	cmd.Env = append(os.Environ(), c.spec.Env...)
	p, err := startProcess(c.sp, "cds-dump", cmd, filepath.Join(c.cfg.BaseDir, "cds-dump.log"), c.marker())
	if err != nil {
		os.Remove(s.lock)
		return
	}
	c.mu.Lock()
	s.builder = p
	c.mu.Unlock()
}
