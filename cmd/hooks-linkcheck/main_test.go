package main

import (
	"strings"
	"testing"
)

// javap -p -s of a Hadoop interface and class, and of two hook classes.
const hadoopJavap = `Compiled from "JournalManager.java"
public interface org.apache.hadoop.hdfs.server.namenode.JournalManager extends java.io.Closeable, org.apache.hadoop.hdfs.server.namenode.LogsPurgeable {
  public abstract void format(org.apache.hadoop.hdfs.server.protocol.NamespaceInfo, boolean) throws java.io.IOException;
    descriptor: (Lorg/apache/hadoop/hdfs/server/protocol/NamespaceInfo;Z)V
  public default void writeLock();
    descriptor: ()V
  public static org.apache.hadoop.hdfs.server.namenode.JournalManager none();
    descriptor: ()Lorg/apache/hadoop/hdfs/server/namenode/JournalManager;
}
Compiled from "LogsPurgeable.java"
interface org.apache.hadoop.hdfs.server.namenode.LogsPurgeable {
  public abstract void purgeLogsOlderThan(long) throws java.io.IOException;
    descriptor: (J)V
}
Compiled from "Box.java"
public class org.apache.hadoop.util.Box<T extends java.lang.Comparable<T>> extends java.util.AbstractList<T> implements java.util.function.Supplier<java.util.Map<java.lang.String, T>> {
  private final java.lang.String name;
    descriptor: Ljava/lang/String;
  public org.apache.hadoop.util.Box(java.lang.String);
    descriptor: (Ljava/lang/String;)V
  public <U> U get(int, java.util.function.Function<T, U>);
    descriptor: (ILjava/util/function/Function;)Ljava/lang/Object;
  static {};
    descriptor: ()V
}
`

const hooksJavap = `Compiled from "Journal.java"
public abstract class io.newtricks.hadoop.events.Journal implements org.apache.hadoop.hdfs.server.namenode.JournalManager {
  public void format(org.apache.hadoop.hdfs.server.protocol.NamespaceInfo, boolean) throws java.io.IOException;
    descriptor: (Lorg/apache/hadoop/hdfs/server/protocol/NamespaceInfo;Z)V
  public abstract void close();
    descriptor: ()V
}
Compiled from "EventJournal.java"
public class io.newtricks.hadoop.EventJournal extends io.newtricks.hadoop.events.Journal {
  public void close();
    descriptor: ()V
}
`

func testDB() *classDB {
	db := &classDB{classes: map[string]*classInfo{}}
	for _, c := range parseClasses(hadoopJavap + hooksJavap) {
		db.classes[c.name] = c
	}
	db.classes["java/io/Closeable"] = &classInfo{name: "java/io/Closeable", iface: true,
		members: []member{{owner: "java/io/Closeable", name: "close", desc: "()V", abstract: true}}}
	return db
}

func TestParseClasses(t *testing.T) {
	db := testDB()
	box := db.get("org/apache/hadoop/util/Box")
	if box == nil || strings.Join(box.supers, " ") != "java/util/AbstractList java/util/function/Supplier" {
		t.Fatalf("Box: %+v", box)
	}
	var names []string
	for _, m := range box.members {
		names = append(names, m.name+m.desc)
	}
	if got := strings.Join(names, " "); got != "nameLjava/lang/String; <init>(Ljava/lang/String;)V get(ILjava/util/function/Function;)Ljava/lang/Object; <clinit>()V" {
		t.Errorf("Box members: %s", got)
	}
	jm := db.get("org/apache/hadoop/hdfs/server/namenode/JournalManager")
	if jm == nil || !jm.iface || len(jm.supers) != 2 {
		t.Fatalf("JournalManager: %+v", jm)
	}
	for _, m := range jm.members {
		if want := m.name == "format"; m.abstract != want {
			t.Errorf("JournalManager.%s abstract = %v", m.name, m.abstract)
		}
	}
	if j := db.get("io/newtricks/hadoop/events/Journal"); j == nil || !j.abstract || j.supers[0] != "java/lang/Object" {
		t.Errorf("Journal: %+v", j)
	}
}

func TestAnalyze(t *testing.T) {
	refs := []ref{
		{kind: "InterfaceMethodref", owner: "org/apache/hadoop/hdfs/server/namenode/JournalManager", name: "writeLock", desc: "()V"}, // a default method
		{kind: "Methodref", owner: "io/newtricks/hadoop/EventJournal", name: "purgeLogsOlderThan", desc: "(J)V"},                     // not checked: ours
		{kind: "Methodref", owner: "org/apache/hadoop/util/Box", name: "<init>", desc: "(Ljava/lang/String;)V"},
		{kind: "Fieldref", owner: "org/apache/hadoop/util/Box", name: "name", desc: "Ljava/lang/String;"},
		{kind: "Methodref", owner: "org/apache/hadoop/util/Box", name: "get", desc: "(I)Ljava/lang/Object;"}, // no such overload
		{kind: "Class", owner: "org/apache/hadoop/Gone"},
	}
	rep := analyze(testDB(), refs, []string{"io/newtricks/hadoop/events/Journal", "io/newtricks/hadoop/EventJournal"})
	want := []string{
		"Methodref org/apache/hadoop/util/Box.get(I)Ljava/lang/Object;",
		"class org/apache/hadoop/Gone (named by the hooks)",
		// EventJournal inherits format and close, but nobody implements LogsPurgeable's method.
		"io/newtricks/hadoop/EventJournal does not implement org/apache/hadoop/hdfs/server/namenode/LogsPurgeable.purgeLogsOlderThan(J)V",
	}
	if got := strings.Join(rep.missing, "\n"); got != strings.Join(sortedCopy(want), "\n") {
		t.Errorf("missing:\n%s\nwant:\n%s", got, strings.Join(sortedCopy(want), "\n"))
	}
	if rep.refs != 5 || rep.types != 1 {
		t.Errorf("refs %d types %d", rep.refs, rep.types)
	}
}

func TestParseRefs(t *testing.T) {
	out := `   #7 = Methodref          #8.#9          // org/apache/hadoop/hdfs/server/namenode/FSNamesystem.writeLock:()V
  #12 = InterfaceMethodref #13.#14        // org/apache/hadoop/hdfs/util/RwLock.writeUnlock:(Ljava/lang/String;)V
  #20 = Fieldref           #21.#22        // org/apache/hadoop/hdfs/server/namenode/FSEditLogOp$AddCloseOp.path:Ljava/lang/String;
  #30 = Class              #31            // "[Lorg/apache/hadoop/fs/XAttr;"
  #31 = Methodref          #32.#33        // org/apache/hadoop/fs/XAttr."<init>":()V`
	var got []string
	for _, r := range parseRefs(out) {
		got = append(got, r.String())
	}
	want := "Methodref org/apache/hadoop/hdfs/server/namenode/FSNamesystem.writeLock()V|InterfaceMethodref org/apache/hadoop/hdfs/util/RwLock.writeUnlock(Ljava/lang/String;)V|Fieldref org/apache/hadoop/hdfs/server/namenode/FSEditLogOp$AddCloseOp.pathLjava/lang/String;|Methodref org/apache/hadoop/fs/XAttr.<init>()V|class org/apache/hadoop/fs/XAttr"
	if strings.Join(got, "|") != want {
		t.Errorf("refs:\n%s\nwant\n%s", strings.Join(got, "|"), want)
	}
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}
