// Package cluster starts and supervises a real HDFS cluster on loopback: one NameNode (or an
// HA nameservice of two, with JournalNodes, ZooKeeper and ZKFCs) and N DataNodes, each a
// separate JVM launched from the pinned Hadoop jars (`make hadoop`), with
// generated core-site.xml / hdfs-site.xml per daemon so that per-node overrides work.
//
// Tests, benchmarks, the demo and the `newtricks cluster` CLI all use it. Every address is a
// free port on 127.0.0.1, so several named clusters ("dc-a", "dc-b") run side by side as long
// as their base directories differ.
//
// Processes never outlive the harness: every daemon runs in its own process group (so the Go
// co-processes that the Java hooks launch die with it), Stop kills whole groups, and unless
// Config.Detached is set each JVM gets Pdeathsig=SIGKILL from an OS thread that lives exactly
// as long as the Cluster, so a crashed or killed test binary takes its JVMs with it.
// Co-processes are not covered by Pdeathsig (they are the JVM's children, not ours); they
// die with the group on Stop, and the hooks must stop them when their JVM exits.
//
// Environment: NEWTRICKS_CACHE (default ~/.cache/newtricks) locates the Hadoop jars
// (DefaultHadoopLib, or NEWTRICKS_HADOOP_LIB directly) and the CLI's clusters; JAVA_HOME, if set, picks the java binary. Tests
// start clusters through package clustertest, which runs them only when
// NEWTRICKS_CLUSTER_TESTS=1.
//
// Daemons run with the C1 JIT only unless Config.FullJIT is set (see there).
//
// Layout of Config.BaseDir:
//
//	state.json                 pids, ports and dirs (read by Attach and `newtricks cluster`)
//	namenode/conf/             core-site.xml, hdfs-site.xml, log4j.properties
//	namenode/name/             dfs.namenode.name.dir
//	namenode/namenode.log      stdout+stderr of every run, appended
//	datanode-<i>/conf/ data/ datanode-<i>.log
//	tmp/                       hadoop.tmp.dir
//
// An HA cluster (Config.HA, see HAConfig and ha.go) has instead of namenode/:
//
//	namenode-<i>/conf/ name/   NameNode i (HA id nn<i>), i = 0, 1
//	journalnode-<i>/conf/ edits/ journalnode-<i>.log   i = 0..2
//	zookeeper/conf/zoo.cfg data/ zookeeper.log         (automatic failover only)
//	zkfc-<i>/conf/ zkfc-<i>.log                        NameNode i's ZKFC (its NameNode's conf)
//	client/conf/ haadmin.log   a HADOOP_CONF_DIR of the nameservice; DFSHAAdmin's runs
//	tmp/namenode-<i>/          NameNode i's hadoop.tmp.dir
package cluster
