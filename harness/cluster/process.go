package cluster

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Daemon names one process of a cluster: NameNode or DataNode(i), and in an HA cluster
// HANameNode(i), JournalNode(i), ZKFC(i) and ZooKeeper. It is also the name of the daemon's
// directory under Config.BaseDir.
type Daemon string

// NameNode is the NameNode of a cluster without HA. In an HA cluster it stands for
// HANameNode(0) wherever a Daemon is taken (LogPath, Running, Children, ...).
const NameNode Daemon = "namenode"

// DataNode names the i-th DataNode (0-based).
func DataNode(i int) Daemon { return Daemon("datanode-" + strconv.Itoa(i)) }

// HANameNode names the i-th NameNode (0 or 1) of an HA cluster; its HA id is HANameNodeID(i).
func HANameNode(i int) Daemon { return Daemon("namenode-" + strconv.Itoa(i)) }

// JournalNode names the i-th JournalNode (0-2) of an HA cluster.
func JournalNode(i int) Daemon { return Daemon("journalnode-" + strconv.Itoa(i)) }

// ZKFC names the ZooKeeper failover controller of HANameNode(i).
func ZKFC(i int) Daemon { return Daemon("zkfc-" + strconv.Itoa(i)) }

// ZooKeeper is the ZooKeeper server of an HA cluster with automatic failover.
const ZooKeeper Daemon = "zookeeper"

// haAdmin is the one-off DFSHAAdmin run (Cluster.HAAdmin); its log is under BaseDir/client.
const haAdmin Daemon = "haadmin"

// Java main classes.
const (
	nameNodeClass    = "org.apache.hadoop.hdfs.server.namenode.NameNode"
	dataNodeClass    = "org.apache.hadoop.hdfs.server.datanode.DataNode"
	journalNodeClass = "org.apache.hadoop.hdfs.qjournal.server.JournalNode"
	zkfcClass        = "org.apache.hadoop.hdfs.tools.DFSZKFailoverController"
	zooKeeperClass   = "org.apache.zookeeper.server.ZooKeeperServerMain"
	haAdminClass     = "org.apache.hadoop.hdfs.tools.DFSHAAdmin"
)

// role is the kind of daemon d is: "namenode", "datanode", "journalnode", "zkfc",
// "zookeeper" or "haadmin".
func (d Daemon) role() string {
	s := string(d)
	if i := strings.LastIndexByte(s, '-'); i > 0 {
		if _, err := strconv.Atoi(s[i+1:]); err == nil {
			return s[:i]
		}
	}
	return s
}

// jvmFlags make Hadoop 3.4 run on Java 17 from a plain `java -cp` launch (what the hadoop
// shell scripts would add).
var jvmFlags = []string{
	"-XX:+IgnoreUnrecognizedVMOptions",
	"--add-opens=java.base/java.io=ALL-UNNAMED",
	"--add-opens=java.base/java.lang=ALL-UNNAMED",
	"--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
	"--add-opens=java.base/java.math=ALL-UNNAMED",
	"--add-opens=java.base/java.net=ALL-UNNAMED",
	"--add-opens=java.base/java.text=ALL-UNNAMED",
	"--add-opens=java.base/java.util=ALL-UNNAMED",
	"--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
	"--add-opens=java.base/java.util.zip=ALL-UNNAMED",
	"--add-opens=java.base/sun.security.util=ALL-UNNAMED",
	"--add-opens=java.base/sun.security.x509=ALL-UNNAMED",
	"-Djava.net.preferIPv4Stack=true",
	// No hsperfdata files; fewer GC threads on a shared 2-core machine.
	"-XX:-UsePerfData",
	"-XX:+UseSerialGC",
}

// launchSpec is everything needed to (re)start a daemon; it is saved in state.json so an
// attached Cluster can restart DataNodes too.
type launchSpec struct {
	Java           string   `json:"java"`
	HadoopLib      string   `json:"hadoop_lib"`
	ExtraClasspath []string `json:"extra_classpath,omitempty"`
	JavaOpts       []string `json:"java_opts,omitempty"`
	Env            []string `json:"env,omitempty"`
	NameNodeHeap   string   `json:"namenode_heap"`
	DataNodeHeap   string   `json:"datanode_heap"`
	SmallHeap      string   `json:"small_heap,omitempty"`
	Detached       bool     `json:"detached"`
	FullJIT        bool     `json:"full_jit,omitempty"`
	NoCDS          bool     `json:"no_cds,omitempty"`
	ClusterName    string   `json:"cluster_name"`
}

// mainClass and heap of daemon d, and its own JVM options.
func (s launchSpec) daemonJVM(d Daemon) (class, heap string, opts []string) {
	small := s.SmallHeap
	if small == "" {
		small = DefaultSmallHeap
	}
	switch d.role() {
	case "namenode":
		return nameNodeClass, s.NameNodeHeap, nil
	case "journalnode":
		return journalNodeClass, small, nil
	case "zkfc":
		// The ZooKeeper client would look for a JAAS "Client" section to authenticate with
		// SASL; the harness's ZooKeeper is open (world ACLs) on loopback.
		return zkfcClass, small, []string{"-Dzookeeper.sasl.client=false"}
	case "zookeeper":
		return zooKeeperClass, small, []string{"-Dzookeeper.admin.enableServer=false", "-Dzookeeper.jmx.log4j.disable=true"}
	case "haadmin":
		return haAdminClass, small, []string{"-Dzookeeper.sasl.client=false"}
	default:
		return dataNodeClass, s.DataNodeHeap, nil
	}
}

// command builds the java command line for daemon d with the given conf dir.
// extraJVM comes right after the harness's flags (class data sharing options).
func (s launchSpec) command(d Daemon, confDir, logDir string, extraJVM []string, args ...string) *exec.Cmd {
	class, heap, own := s.daemonJVM(d)
	return s.commandClass(d, class, heap, own, confDir, logDir, extraJVM, args...)
}

// commandClass is command with the main class (or a Java source file), heap and the
// daemon's own JVM options given.
func (s launchSpec) commandClass(d Daemon, class, heap string, own []string, confDir, logDir string, extraJVM []string, args ...string) *exec.Cmd {
	// The conf dir goes last: class data sharing needs the jars as a prefix (see cds.go).
	cp := append([]string{filepath.Join(s.HadoopLib, "*")}, s.ExtraClasspath...)
	cp = append(cp, confDir)
	argv := []string{"-Xmx" + heap}
	argv = append(argv, jvmFlags...)
	argv = append(argv, extraJVM...)
	argv = append(argv, own...)
	argv = append(argv,
		"-Dhadoop.log.dir="+logDir,
		"-Dhadoop.log.file="+string(d)+".log",
		"-Dhadoop.root.logger=INFO,console",
		"-Dhadoop.home.dir="+filepath.Dir(s.HadoopLib),
		"-Dhadoop.id.str="+s.ClusterName+"-"+string(d),
		"-Dnewtricks.cluster="+s.ClusterName,
		"-Dnewtricks.daemon="+string(d),
	)
	if !s.FullJIT {
		argv = append(argv, "-XX:TieredStopAtLevel=1")
	}
	argv = append(argv, s.JavaOpts...)
	argv = append(argv, "-cp", strings.Join(cp, ":"), class)
	argv = append(argv, args...)
	cmd := exec.Command(s.Java, argv...)
	cmd.Env = append(os.Environ(), s.Env...)
	cmd.Dir = filepath.Dir(confDir)
	return cmd
}

// process is one running (or exited) daemon JVM, the leader of its own process group.
type process struct {
	daemon  Daemon
	pid     int
	logPath string
	// logStart is the log size when this run began, so errors quote only this run.
	logStart int64
	// done is closed once the process is reaped; nil if another process started it
	// (Attach), in which case /proc is polled.
	done chan struct{}
	err  error // exit status, valid after done
	// marker is a string that must be in /proc/<pid>/cmdline (the base dir), so a
	// recycled pid is never signalled.
	marker string
}

// spawner starts processes from one OS thread that lives as long as the cluster. Linux
// sends Pdeathsig when the *thread* that forked a child exits, and the Go runtime may end
// idle threads, so the thread is locked and never unlocked: when the spawner closes, the
// thread exits and any child still alive gets SIGKILL.
type spawner struct {
	reqs chan func()
}

func newSpawner() *spawner {
	s := &spawner{reqs: make(chan func())}
	go func() {
		runtime.LockOSThread()
		for f := range s.reqs {
			f()
		}
	}()
	return s
}

// do runs f on the spawner thread and waits for it.
func (s *spawner) do(f func()) {
	done := make(chan struct{})
	s.reqs <- func() { f(); close(done) }
	<-done
}

func (s *spawner) close() { close(s.reqs) }

// start launches cmd for daemon d with its output appended to logPath. With sp nil the
// process is detached (no Pdeathsig).
func startProcess(sp *spawner, d Daemon, cmd *exec.Cmd, logPath, marker string) (*process, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open log %s: %w", logPath, err)
	}
	defer f.Close()
	st, _ := f.Stat()
	fmt.Fprintf(f, "=== newtricks %s: %s %s\n", time.Now().UTC().Format(time.RFC3339), d, strings.Join(cmd.Args, " "))
	cmd.Stdout, cmd.Stderr = f, f
	// Own process group, so signalling -pid reaches the co-processes too. A detached daemon
	// gets its own session instead (which is also a new group), so closing the terminal
	// that ran `newtricks cluster up` does not hang it up.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: sp != nil, Setsid: sp == nil}
	if sp != nil {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
		sp.do(func() { err = cmd.Start() })
	} else {
		err = cmd.Start()
	}
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", d, err)
	}
	p := &process{daemon: d, pid: cmd.Process.Pid, logPath: logPath, done: make(chan struct{}), marker: marker}
	if st != nil {
		p.logStart = st.Size()
	}
	go func() {
		p.err = cmd.Wait()
		if f, err := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND, 0); err == nil {
			fmt.Fprintf(f, "=== newtricks %s: %s pid %d exited: %v\n", time.Now().UTC().Format(time.RFC3339), d, p.pid, exitString(p.err))
			f.Close()
		}
		close(p.done)
	}()
	return p, nil
}

func exitString(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// running reports whether the JVM is still alive.
func (p *process) running() bool {
	if p == nil {
		return false
	}
	if p.done != nil {
		select {
		case <-p.done:
			return false
		default:
			return true
		}
	}
	return pidAlive(p.pid, p.marker)
}

// signalGroup sends sig to the process group, if it is still ours. While the JVM lives the
// group is. After it died, its pid (the group id) cannot be reused while the group has
// members left (co-processes), but it can once the group is empty, so a group whose leader
// pid is alive again under another command line is left alone.
func (p *process) signalGroup(sig syscall.Signal) {
	if !p.running() {
		if !groupAlive(p.pid) {
			return
		}
		if st, ok := readStat(p.pid); ok && st.state != 'Z' && !pidAlive(p.pid, p.marker) {
			return // pid reused by an unrelated process
		}
	}
	_ = syscall.Kill(-p.pid, sig)
}

// stop sends SIGTERM to the group, waits up to grace for the JVM to exit, then SIGKILLs the
// whole group (co-processes included) and waits until no member is left.
func (p *process) stop(grace time.Duration) {
	if p == nil {
		return
	}
	if p.running() {
		p.signalGroup(syscall.SIGTERM)
		p.waitExit(grace)
	}
	p.kill()
}

// kill SIGKILLs the whole group and waits (bounded) until the JVM is reaped and the group is
// empty.
func (p *process) kill() {
	if p == nil {
		return
	}
	p.signalGroup(syscall.SIGKILL)
	p.waitExit(10 * time.Second)
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		// kill(-pgid, 0) also succeeds for zombies that init has not reaped yet; only live
		// members matter.
		if err := syscall.Kill(-p.pid, 0); errors.Is(err, syscall.ESRCH) || !groupAlive(p.pid) {
			return
		}
		_ = syscall.Kill(-p.pid, syscall.SIGKILL)
		time.Sleep(20 * time.Millisecond)
	}
}

func (p *process) waitExit(d time.Duration) bool {
	if p.done != nil {
		select {
		case <-p.done:
			return true
		case <-time.After(d):
			return false
		}
	}
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if !pidAlive(p.pid, p.marker) {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return !pidAlive(p.pid, p.marker)
}

// logSince returns what this run of the process wrote to its log.
func (p *process) logSince() string {
	f, err := os.Open(p.logPath)
	if err != nil {
		return ""
	}
	defer f.Close()
	if _, err := f.Seek(p.logStart, 0); err != nil {
		return ""
	}
	var b bytes.Buffer
	_, _ = b.ReadFrom(f)
	return b.String()
}

// bindFailed reports whether the run died because a port was taken.
func (p *process) bindFailed() bool {
	l := p.logSince()
	return strings.Contains(l, "BindException") || strings.Contains(l, "Address already in use")
}
