#!/bin/sh
# Starts one HDFS daemon ("namenode" or "datanode") with the newtricks hooks enabled, or runs
# the conformance kit against the compose cluster ("conformance [newtricks conformance flags]").
set -eu
role=${1:?usage: entrypoint.sh namenode|datanode|conformance [flags]}
# As Hadoop's own scripts do: IPv4 sockets (addresses as the NameNode and clients see them).
OPENS="-XX:+IgnoreUnrecognizedVMOptions -Djava.net.preferIPv4Stack=true"
for p in java.io java.lang java.lang.reflect java.math java.net java.text java.util \
         java.util.concurrent java.util.zip sun.security.util sun.security.x509; do
  OPENS="$OPENS --add-opens=java.base/$p=ALL-UNNAMED"
done
CP="/opt/newtricks/conf/$role:/opt/hadoop/lib/*"
# NEWTRICKS_JAVA_OPTS: more JVM options (compose.yaml passes C1-only JIT by default).
JAVA="java $OPENS ${NEWTRICKS_JAVA_OPTS:-} -Dhadoop.log.dir=/var/log/hadoop -cp $CP"
mkdir -p /var/log/hadoop /data
case "$role" in
  namenode)
    [ -d /data/name/current ] || $JAVA org.apache.hadoop.hdfs.server.namenode.NameNode -format -force -nonInteractive
    exec $JAVA org.apache.hadoop.hdfs.server.namenode.NameNode ;;
  datanode)
    exec $JAVA org.apache.hadoop.hdfs.server.datanode.DataNode ;;
  conformance)
    # The cluster by its shipped conf dirs: the NameNode's (addresses) and a DataNode's (its
    # API port); doctor checks both, from this container (--remote).
    shift
    exec newtricks conformance --conf /opt/newtricks/conf/namenode --conf /opt/newtricks/conf/datanode "$@" ;;
  *) echo "unknown role $role" >&2; exit 2 ;;
esac
