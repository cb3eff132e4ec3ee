// Package doctor checks a newtricks deployment the way an admin needs it checked: the Hadoop
// configuration (hdfs-site.xml and core-site.xml in one conf dir) before a restart, and the
// running daemons and co-processes after it.
//
// Every check yields a Finding: pass, warn or fail, what was found, and the hdfs-site key (or
// file) to change. Run never stops at the first problem; it reports all of them. A Report with
// any fail is what `newtricks doctor` turns into exit status 1.
//
// The checks:
//
//   - configuration: the hook classes in dfs.namenode.plugins / dfs.datanode.plugins, the
//     audit-logger list (keeps `default`), the event journal (a newtricks:// edits dir needs
//     its plugin class and must not be required), the co-process binary keys, the API and metrics
//     addresses, block access tokens when datanode-ext is enabled, the authentication mode,
//     and every newtricks.* value through the co-processes' own parsers (nnext, hotspot,
//     mirror, dnext, offload), which would otherwise fail their Configure at every restart;
//   - files on this host: each co-process binary exists, is executable, finds its shared
//     libraries (FFmpeg for datanode-ext's transforms) and answers the go-plugin handshake
//     with its version; the socket directory is a real directory owned by the daemon's user
//     with mode 0700 and short enough for unix socket paths; the hooks jar is on the
//     classpath, once, and its version matches the binaries';
//   - the running cluster: the NameNode answers, is out of safe mode and has live DataNodes;
//     each daemon loaded its hook (JMX) and reports its co-process healthy, with restarts,
//     dropped audit events and namespace gaps; each daemon runs with this conf's settings
//     (its /conf: authentication and block tokens must agree, a changed newtricks key means a
//     restart is pending); each co-process's /metrics answers; the
//     mirror's destination accepts connections.
package doctor
