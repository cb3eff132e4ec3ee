package hdfsio

import (
	"fmt"
	"os"
	"reflect"
	"unsafe"

	"github.com/colinmarc/hdfs/v2"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// colinmarc/hdfs (v2.4.0) sends the file's last block with the first `complete` only: Close
// drops its block writer before it asks, so a second Close asks with no last block. The
// NameNode checks the penultimate block before it commits the last one, so when the first
// `complete` comes before a DataNode reported the penultimate block (a multi-block file on a
// loaded cluster), it returns false without committing the last block; every later Close then
// leaves that block under construction and the file never completes ("replication in
// progress" forever, until the lease expires). The Java client sends the last block on every
// retry (DFSOutputStream.completeFile). The functions below do what the Java client does:
// they keep the last block from before Close and send it again on each retry, through the
// client's own NameNode connection (the lease holder's name must be the writer's).
//
// colinmarc/hdfs exposes neither the block nor the connection, so they are read from its
// unexported fields; TestLastBlockFields fails if an upgrade changes them, and lastBlock
// returns nil (Close retries as before) instead of crashing.

// pendingBlock is what a retried `complete` needs from a FileWriter, read before Close.
type pendingBlock struct {
	// last is the ExtendedBlockProto of the block being written (Close sets its length on
	// this same message before its `complete`).
	last proto.Message
	// execute is the writer's NameNodeConnection.Execute; clientName its lease holder name.
	execute    reflect.Value
	clientName string
	name       string
	fileID     *uint64
}

// exported returns f (an unexported field of an addressable struct) as a value whose
// interface may be taken.
func exported(f reflect.Value) reflect.Value {
	return reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
}

// lastBlock reads w's current block and NameNode connection; nil if w has no block (nothing
// written: Close sends none either) or colinmarc/hdfs's fields are not where v2.4.0 has them.
func lastBlock(w *hdfs.FileWriter) (p *pendingBlock) {
	defer func() {
		if recover() != nil {
			p = nil
		}
	}()
	v := reflect.ValueOf(w).Elem()
	bw := v.FieldByName("blockWriter")
	if !bw.IsValid() || bw.Kind() != reflect.Pointer || bw.IsNil() {
		return nil
	}
	lb, ok := exported(bw.Elem().FieldByName("Block")).Interface().(proto.Message)
	if !ok || lb == nil {
		return nil
	}
	m := lb.ProtoReflect()
	fd := m.Descriptor().Fields().ByName("b")
	if fd == nil || fd.Kind() != protoreflect.MessageKind || !m.Has(fd) {
		return nil
	}
	cl, ok := exported(v.FieldByName("client")).Interface().(*hdfs.Client)
	if !ok || cl == nil {
		return nil
	}
	nn := exported(reflect.ValueOf(cl).Elem().FieldByName("namenode"))
	exec := nn.MethodByName("Execute")
	if !exec.IsValid() {
		return nil
	}
	name, _ := exported(v.FieldByName("name")).Interface().(string)
	fileID, _ := exported(v.FieldByName("fileId")).Interface().(*uint64)
	return &pendingBlock{last: m.Get(fd).Message().Interface(), execute: exec,
		clientName: cl.Name(), name: name, fileID: fileID}
}

// complete asks the NameNode to complete the file with its last block, as the Java client's
// retries do; hdfs.ErrReplicating (wrapped as Close wraps it) while it answers false.
func (p *pendingBlock) complete() error {
	req, err := newMessage("hadoop.hdfs.CompleteRequestProto")
	if err != nil {
		return err
	}
	resp, err := newMessage("hadoop.hdfs.CompleteResponseProto")
	if err != nil {
		return err
	}
	set := func(field string, v protoreflect.Value) {
		req.Set(req.Descriptor().Fields().ByName(protoreflect.Name(field)), v)
	}
	set("src", protoreflect.ValueOfString(p.name))
	set("clientName", protoreflect.ValueOfString(p.clientName))
	set("last", protoreflect.ValueOfMessage(p.last.ProtoReflect()))
	if p.fileID != nil {
		set("fileId", protoreflect.ValueOfUint64(*p.fileID))
	}
	out := p.execute.Call([]reflect.Value{reflect.ValueOf("complete"),
		reflect.ValueOf(req.Interface()), reflect.ValueOf(resp.Interface())})
	if e, _ := out[0].Interface().(error); e != nil {
		return &os.PathError{Op: "create", Path: p.name, Err: e}
	}
	if !resp.Get(resp.Descriptor().Fields().ByName("result")).Bool() {
		return &os.PathError{Op: "create", Path: p.name, Err: hdfs.ErrReplicating}
	}
	return nil
}

func newMessage(name protoreflect.FullName) (protoreflect.Message, error) {
	mt, err := protoregistry.GlobalTypes.FindMessageByName(name)
	if err != nil {
		return nil, fmt.Errorf("hdfsio: %s not registered by colinmarc/hdfs: %w", name, err)
	}
	return mt.New(), nil
}
