package io.newtricks.bench;

import java.io.File;
import java.io.IOException;
import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The local file system (fs.file.impl of the benchmark's DistCp JVM only), but a rename whose
 * source is already gone returns false, as a rename on HDFS does, instead of falling into
 * RawLocalFileSystem.rename's copy fallback, which throws FileNotFoundException.
 *
 * <p>Why: DistCp's dynamic strategy hands out chunks of the copy list by renaming chunk files
 * in the job's meta folder; a map that loses the race for a chunk gets false from the rename
 * and tries the next one. On a cluster that folder is on HDFS, where rename is atomic. The
 * MapReduce local job runner keeps it on the local file system, where two maps racing for
 * the same chunk made the loser's rename copy a file that had just been moved away ("chunkDir/
 * fileList.seq.chunk.N does not exist") and failed the job. Nothing else changes: a rename
 * that fails for another reason still takes Hadoop's own path, and the copy itself reads and
 * writes HDFS. Used only by bench/mirror.
 */
public class AtomicRenameLocalFileSystem extends LocalFileSystem {
  public AtomicRenameLocalFileSystem() {
    super(new Raw());
  }

  /** RawLocalFileSystem with the rename described above. */
  public static class Raw extends RawLocalFileSystem {
    private static final Logger LOG = LoggerFactory.getLogger(AtomicRenameLocalFileSystem.class);

    @Override
    public boolean rename(Path src, Path dst) throws IOException {
      File from = pathToFile(src);
      if (from.renameTo(pathToFile(dst))) {
        return true; // rename(2): atomic
      }
      if (!from.exists()) {
        // Another map renamed it first (the benchmark's log counts these lines).
        LOG.info("rename lost the race: {} is gone", src);
        return false;
      }
      return super.rename(src, dst);
    }
  }
}
