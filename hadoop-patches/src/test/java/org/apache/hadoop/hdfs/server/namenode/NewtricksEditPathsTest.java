package org.apache.hadoop.hdfs.server.namenode;

import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import io.newtricks.hadoop.events.EventJournalAccess;
import org.junit.Test;

public class NewtricksEditPathsTest {
  private static final String[] PREFIXES = {"/mirror-src/", "/tmp/m/"};

  @Test
  public void readsThePathsOfTheFrequentOps() {
    FSEditLogOp.OpInstanceCache cache = new FSEditLogOp.OpInstanceCache();
    FSEditLogOp.AddOp add = FSEditLogOp.AddOp.getInstance(cache);
    add.path = "/nnbench/f1";
    assertFalse(NewtricksEditPaths.mayMatch(add, PREFIXES));
    add.path = "/mirror-src/a/f1";
    assertTrue(NewtricksEditPaths.mayMatch(add, PREFIXES));

    FSEditLogOp.CloseOp close = FSEditLogOp.CloseOp.getInstance(cache);
    close.path = "/tmp/m/x";
    assertTrue(NewtricksEditPaths.mayMatch(close, PREFIXES));

    // A rename is selected by its source or its destination.
    FSEditLogOp.RenameOp rename = FSEditLogOp.RenameOp.getInstance(cache);
    rename.src = "/elsewhere/a";
    rename.dst = "/elsewhere/b";
    assertFalse(NewtricksEditPaths.mayMatch(rename, PREFIXES));
    rename.dst = "/mirror-src/b";
    assertTrue(NewtricksEditPaths.mayMatch(rename, PREFIXES));
    FSEditLogOp.RenameOldOp old = FSEditLogOp.RenameOldOp.getInstance(cache);
    old.src = "/mirror-src/a";
    old.dst = "/elsewhere/b";
    assertTrue(NewtricksEditPaths.mayMatch(old, PREFIXES));

    FSEditLogOp.DeleteOp delete = FSEditLogOp.DeleteOp.getInstance(cache);
    delete.path = "/nnbench/d";
    assertFalse(NewtricksEditPaths.mayMatch(delete, PREFIXES));
    FSEditLogOp.MkdirOp mkdir = FSEditLogOp.MkdirOp.getInstance(cache);
    mkdir.path = "/mirror-src";
    assertFalse(NewtricksEditPaths.mayMatch(mkdir, PREFIXES)); // the prefix ends with "/"

    // Ops it does not read are left to the filter after translation.
    FSEditLogOp.SetOwnerOp owner = FSEditLogOp.SetOwnerOp.getInstance(cache);
    owner.src = "/nnbench/f1";
    assertTrue(NewtricksEditPaths.mayMatch(owner, PREFIXES));
  }

  @Test
  public void theJournalSkipsOnlyWithPrefixes() {
    FSEditLogOp.AddOp add = FSEditLogOp.AddOp.getInstance(new FSEditLogOp.OpInstanceCache());
    add.path = "/nnbench/f1";
    assertTrue(EventJournalAccess.outsidePrefixes(add, PREFIXES));
    assertFalse(EventJournalAccess.outsidePrefixes(add, new String[0]));
  }
}
