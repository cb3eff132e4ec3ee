package doctor

import (
	"archive/zip"
	"bufio"
	"os"
	"path/filepath"
	"strings"
)

const (
	hookClass = "io/newtricks/hadoop/NameNodePlugin.class"
	pomProps  = "META-INF/maven/io.newtricks/newtricks-hadoop-hooks/pom.properties"
)

// classpath returns the entries to search: Options.Classpath, else what a stock Hadoop
// install puts on its daemons' classpath.
func (d *doctor) classpath() (entries []string, source string) {
	if len(d.o.Classpath) > 0 {
		return d.o.Classpath, "--classpath"
	}
	var src []string
	if cp := os.Getenv("HADOOP_CLASSPATH"); cp != "" {
		entries = append(entries, filepath.SplitList(cp)...)
		src = append(src, "$HADOOP_CLASSPATH")
	}
	if home := os.Getenv("HADOOP_HOME"); home != "" {
		for _, sub := range []string{"common", "common/lib", "hdfs", "hdfs/lib"} {
			entries = append(entries, filepath.Join(home, "share/hadoop", sub, "*"))
		}
		src = append(src, "$HADOOP_HOME/share/hadoop")
	}
	return entries, strings.Join(src, " and ")
}

// jars expands classpath entries to jar files: "dir/*" is every jar in dir, a directory
// alone is classes (skipped), a file is itself.
func jars(entries []string) []string {
	var out []string
	for _, e := range entries {
		if e == "" {
			continue
		}
		if dir, ok := strings.CutSuffix(e, "*"); ok {
			m, _ := filepath.Glob(filepath.Join(dir, "*.jar"))
			out = append(out, m...)
			continue
		}
		if fi, err := os.Stat(e); err == nil && fi.Mode().IsRegular() {
			out = append(out, e)
		}
	}
	return out
}

// hookJar reports whether the jar holds the hooks, and their version.
func hookJar(path string) (is bool, version string) {
	z, err := zip.OpenReader(path)
	if err != nil {
		return false, ""
	}
	defer z.Close()
	for _, f := range z.File {
		switch f.Name {
		case hookClass:
			is = true
		case pomProps:
			if r, err := f.Open(); err == nil {
				sc := bufio.NewScanner(r)
				for sc.Scan() {
					if v, ok := strings.CutPrefix(sc.Text(), "version="); ok {
						version = strings.TrimSpace(v)
					}
				}
				r.Close()
			}
		}
	}
	return is, version
}

func (d *doctor) checkJar() {
	const check = "hooks.jar"
	entries, source := d.classpath()
	if len(entries) == 0 {
		d.r.warn(check, "", "cannot tell whether the hooks jar is on the classpath: set HADOOP_HOME or pass --classpath (the daemon's, e.g. from `hadoop classpath`)")
		return
	}
	var found []string
	versions := map[string]bool{}
	for _, j := range jars(entries) {
		if ok, v := hookJar(j); ok {
			found = append(found, j)
			d.jarVersion = v
			versions[v] = true
		}
	}
	switch {
	case len(found) == 0:
		d.r.fail(check, "", "no jar on the classpath (%s) holds %s: copy newtricks-hadoop-hooks.jar into share/hadoop/hdfs/lib/ on every NameNode and DataNode host",
			source, strings.TrimSuffix(strings.ReplaceAll(hookClass, "/", "."), ".class"))
	case len(versions) > 1 || len(found) > 1:
		d.r.fail(check, "", "%d hooks jars on the classpath (%s): which one loads is up to the JVM; keep one", len(found), strings.Join(found, ", "))
	default:
		d.r.pass(check, "", "%s (version %s) is on the classpath", found[0], d.jarVersion)
	}
}
