package events

import (
	"context"
	"fmt"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// BenchmarkDeliver is namenode-ext's share of one forwarded event, without the transport:
// decoding a batch as gRPC hands it over (proto.Unmarshal) and Sink.Deliver with one
// subscriber, the retained ring of 10,000 and the metrics, as in bench-nn's "worst"
// configuration (namespace CREATE/CLOSE and audited opens, every path). Per event:
// ns/event; allocations per batch: allocs/op.
func BenchmarkDeliver(b *testing.B) {
	for _, n := range []int{1, 16, 128, 1024} {
		b.Run(fmt.Sprintf("batch=%d", n), func(b *testing.B) {
			s := NewSink(10000, -1)
			s.Want(Interest{Namespace: []string{"CREATE", "CLOSE"}, Audit: []string{"open"}})
			seen := 0
			s.Subscribe(func(Event) { seen++ })
			txid := int64(0)
			now := time.Now().UnixMilli()
			batches := make([][]byte, 64)
			for i := range batches {
				bt := &pb.EventBatch{Seq: int64(i)}
				for j := 0; j < n; j++ {
					if j%2 == 0 {
						txid++
						bt.Events = append(bt.Events, &pb.Event{Kind: &pb.Event_Namespace{Namespace: &pb.NamespaceEvent{
							Txid: txid, Type: pb.NamespaceEvent_CLOSE, Path: fmt.Sprintf("/nnbench/created/f%07d", txid), Size: 1234, TimeMs: now}}})
					} else {
						bt.Events = append(bt.Events, &pb.Event{Kind: &pb.Event_Audit{Audit: &pb.AuditEvent{
							Cmd: "open", Src: fmt.Sprintf("/nnbench/created/f%07d", txid), User: "alice", ClientIp: "127.0.0.1", Allowed: true, TimeMs: now}}})
					}
				}
				raw, err := proto.Marshal(bt)
				if err != nil {
					b.Fatal(err)
				}
				batches[i] = raw
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var bt pb.EventBatch
				if err := proto.Unmarshal(batches[i%len(batches)], &bt); err != nil {
					b.Fatal(err)
				}
				if i%len(batches) == 0 {
					s.mu.Lock()
					s.lastTxid = -1 // the same txids again: not duplicates
					s.mu.Unlock()
				}
				if _, err := s.Deliver(context.Background(), &bt); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/event")
			if seen == 0 {
				b.Fatal("no event reached the subscriber")
			}
		})
	}
}
