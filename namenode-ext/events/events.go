package events

import (
	"time"

	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// Audit is one audited NameNode call.
type Audit struct {
	Cmd, Src, Dst, User, ClientIP string
	Allowed                       bool
	Time                          time.Time
}

// Namespace is one inotify event.
type Namespace struct {
	Txid    int64
	Type    string // "CREATE", "CLOSE", "RENAME", "UNLINK", ...
	Path    string
	DstPath string
	Size    int64
	Time    time.Time
}

// Event is either an Audit or a Namespace event, with the time namenode-ext received it.
type Event struct {
	Received  time.Time
	Audit     *Audit
	Namespace *Namespace
}

// Path returns the event's source path.
func (e Event) Path() string {
	if e.Audit != nil {
		return e.Audit.Src
	}
	return e.Namespace.Path
}

// Dst returns the event's destination path, if any.
func (e Event) Dst() string {
	if e.Audit != nil {
		return e.Audit.Dst
	}
	return e.Namespace.DstPath
}

func fromProto(ev *pb.Event, now time.Time) (Event, bool) {
	switch k := ev.GetKind().(type) {
	case *pb.Event_Audit:
		a := k.Audit
		return Event{Received: now, Audit: &Audit{Cmd: a.GetCmd(), Src: a.GetSrc(), Dst: a.GetDst(),
			User: a.GetUser(), ClientIP: a.GetClientIp(), Allowed: a.GetAllowed(),
			Time: time.UnixMilli(a.GetTimeMs())}}, true
	case *pb.Event_Namespace:
		n := k.Namespace
		return Event{Received: now, Namespace: &Namespace{Txid: n.GetTxid(), Type: n.GetType().String(),
			Path: n.GetPath(), DstPath: n.GetDstPath(), Size: n.GetSize(),
			Time: time.UnixMilli(n.GetTimeMs())}}, true
	}
	return Event{}, false
}

// ToRecord converts an event for the public API.
func ToRecord(e Event) *pb.RecordedEvent {
	r := &pb.RecordedEvent{ReceivedMs: e.Received.UnixMilli()}
	if a := e.Audit; a != nil {
		r.Kind = &pb.RecordedEvent_Audit{Audit: &pb.AuditRecord{Cmd: a.Cmd, Src: a.Src, Dst: a.Dst,
			User: a.User, ClientIp: a.ClientIP, Allowed: a.Allowed, TimeMs: a.Time.UnixMilli()}}
	} else if n := e.Namespace; n != nil {
		r.Kind = &pb.RecordedEvent_Namespace{Namespace: &pb.NamespaceRecord{Txid: n.Txid, Type: n.Type,
			Path: n.Path, DstPath: n.DstPath, Size: n.Size, TimeMs: n.Time.UnixMilli()}}
	}
	return r
}
