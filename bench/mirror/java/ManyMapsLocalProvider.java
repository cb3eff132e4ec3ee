package io.newtricks.bench;

import java.io.IOException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapred.LocalClientProtocolProvider;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.mapreduce.protocol.ClientProtocol;

/**
 * The MapReduce local job runner, but keeping the job's number of maps: Hadoop's
 * LocalClientProtocolProvider sets mapreduce.job.maps to 1 on every job it accepts, so
 * `distcp -m 16` would copy everything in one map. With this provider first on the classpath
 * and mapreduce.local.map.tasks.maximum=16, DistCp's 16 maps run as 16 threads of one JVM,
 * as 16 map tasks would on a cluster. Used only by bench/mirror.
 */
public class ManyMapsLocalProvider extends LocalClientProtocolProvider {
  @Override
  public ClientProtocol create(Configuration conf) throws IOException {
    int maps = conf.getInt(MRJobConfig.NUM_MAPS, 1);
    ClientProtocol p = super.create(conf);
    if (p != null) {
      conf.setInt(MRJobConfig.NUM_MAPS, maps);
    }
    return p;
  }
}
