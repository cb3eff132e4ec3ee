package offload

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/newtricks/newtricks/datanode-ext/governor"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
	"github.com/newtricks/newtricks/schedule"
	"github.com/newtricks/newtricks/xformgraph"
)

// The inverses of the edge's conversions, written here independently: a field one side drops
// or mixes up breaks the round trip.

func openRequestToProto(r OpenRequest) *pb.OpenSessionRequest {
	out := &pb.OpenSessionRequest{Rank: uint32(r.Rank), StartStep: r.StartStep, Lookahead: uint32(r.Lookahead),
		DeterminismDomain: r.DeterminismDomain, RawOnly: r.RawOnly}
	if r.Schedule != nil {
		out.Schedule = r.Schedule.ToProto()
	}
	for _, s := range r.Sources {
		out.Sources = append(out.Sources, &pb.SessionSource{IndexSha256: s.IndexSHA256})
	}
	for _, m := range r.Members {
		out.Members = append(out.Members, &pb.SessionMember{DatanodeUuid: m})
	}
	return out
}

func openResultFromProto(r *pb.OpenSessionResponse) OpenResult {
	return OpenResult{SessionID: r.GetSessionId(), DatanodeUUID: r.GetDatanodeUuid(), DeterminismDomain: r.GetDeterminismDomain(),
		DomainMatch: r.GetDomainMatch(), Lookahead: int(r.GetLookahead()), Shedding: r.GetShedding()}
}

func stepRequestToProto(r StepRequest) *pb.GetStepRequest {
	return &pb.GetStepRequest{SessionId: r.SessionID, Step: r.Step, Slots: r.Slots, MaxWaitMs: uint32(r.MaxWait / time.Millisecond)}
}

func sampleFromProto(s *pb.OffloadSample) Sample {
	out := Sample{Step: s.GetStep(), Slot: s.GetSlot(), Source: int(s.GetSource()), Key: s.GetKey(), Epoch: s.GetEpoch(),
		Frames: s.GetFrames(), NodeMicros: s.GetNodeMicros()}
	if s.GetErrorCode() != 0 {
		out.Err = status.Error(codes.Code(s.GetErrorCode()), s.GetError())
	}
	return out
}

// TestOpenRequestRoundTrip: every field of OpenSessionRequest but the user (the edge resolves
// it) survives the conversion; a schedule that does not convert is kept as the error to report.
func TestOpenRequestRoundTrip(t *testing.T) {
	w := newWorld(t, 3, "")
	in := w.openProto()
	in.User = ""
	in.Rank, in.StartStep, in.Lookahead, in.RawOnly, in.DeterminismDomain = 1, 7, 3, true, "xformgraph=0 test"
	in.Schedule.Phases = []*pb.WeightPhase{{FromStep: 0, Weights: []float64{1}}}
	in.Members = append(in.Members, &pb.SessionMember{DatanodeUuid: "dn-b"})
	r := openRequestFromProto(in)
	if r.scheduleErr != nil {
		t.Fatal(r.scheduleErr)
	}
	if back := openRequestToProto(r); !proto.Equal(back, in) {
		t.Errorf("round trip:\n got %v\nwant %v", back, in)
	}

	empty := openRequestFromProto(&pb.OpenSessionRequest{})
	if empty.Schedule != nil || !errors.Is(empty.scheduleErr, schedule.ErrInvalid) || empty.Sources != nil || empty.Members != nil {
		t.Errorf("empty request: %+v", empty)
	}
	bad := w.openProto()
	bad.Schedule.Version = 99
	if r := openRequestFromProto(bad); r.Schedule != nil || !errors.Is(r.scheduleErr, schedule.ErrInvalid) {
		t.Errorf("schedule of another version: %v %v, want its conversion error", r.Schedule, r.scheduleErr)
	}
}

// TestStepRequestRoundTrip: the step request's fields, the wait at its extremes.
func TestStepRequestRoundTrip(t *testing.T) {
	for _, in := range []*pb.GetStepRequest{
		{},
		{SessionId: "s", Step: 1, Slots: []uint32{3, 1}, MaxWaitMs: 1},
		{SessionId: "s", Step: math.MaxUint64, Slots: []uint32{math.MaxUint32}, MaxWaitMs: math.MaxUint32},
	} {
		r := stepRequestFromProto(in)
		if r.MaxWait != time.Duration(in.GetMaxWaitMs())*time.Millisecond || r.MaxWait < 0 {
			t.Errorf("max_wait_ms %d became %v", in.GetMaxWaitMs(), r.MaxWait)
		}
		if back := stepRequestToProto(r); !proto.Equal(back, in) {
			t.Errorf("round trip of %v: %v", in, back)
		}
	}
}

// TestOpenResultRoundTrip: what the node answers at open, field by field.
func TestOpenResultRoundTrip(t *testing.T) {
	for _, in := range []OpenResult{
		{},
		{SessionID: "id", DatanodeUUID: "dn-a", DeterminismDomain: "d", DomainMatch: true, Lookahead: 64, Shedding: true},
	} {
		if back := openResultFromProto(openResultToProto(in)); back != in {
			t.Errorf("round trip of %+v: %+v", in, back)
		}
	}
}

// TestSampleToProto: an answered sample's fields survive, and its error goes out as the
// per-sample code of its kind and its text.
func TestSampleToProto(t *testing.T) {
	base := Sample{Step: 3, Slot: 2, Source: 1, Key: "s01", Epoch: 4, Frames: []byte("NTXF..."), NodeMicros: math.MaxUint32}
	if back := sampleFromProto(sampleToProto(base)); !reflect.DeepEqual(back, base) {
		t.Errorf("round trip of %+v: %+v", base, back)
	}
	for _, tc := range []struct {
		err  error
		code codes.Code
	}{
		{fmt.Errorf("sample %q: %w", "k", ErrPermission), codes.PermissionDenied},
		{fromStatus(status.Error(codes.PermissionDenied, "token")), codes.PermissionDenied}, // the DataNode's refusal
		{fmt.Errorf("x: %w", xformgraph.ErrLimit), codes.ResourceExhausted},
		{fmt.Errorf("x: %w", xformgraph.ErrUnsupported), codes.Unimplemented},
		{fmt.Errorf("x: %w", xformgraph.ErrDecode), codes.InvalidArgument},
		{fmt.Errorf("x: %w", xformgraph.ErrTypeMismatch), codes.InvalidArgument},
		{fmt.Errorf("sample %q: %w", "k", ErrUnavailable), codes.Unavailable},
		{fromStatus(status.Error(codes.Unavailable, "down")), codes.Unavailable},
		{fmt.Errorf("x: %w", ErrInvalid), codes.Internal}, // not a sample's kind of failure
		{context.Canceled, codes.Internal},
		{errors.New("anything else"), codes.Internal},
	} {
		s := base
		s.Err = tc.err
		got := sampleToProto(s)
		if codes.Code(got.GetErrorCode()) != tc.code || got.GetError() != tc.err.Error() {
			t.Errorf("%v: code %v %q, want %v", tc.err, codes.Code(got.GetErrorCode()), got.GetError(), tc.code)
		}
		if !slices.Contains(SampleCodes, tc.code) {
			t.Errorf("%v is not among SampleCodes (the metrics' labels)", tc.code)
		}
	}
	if b := samplesToProto([]Sample{base, {Key: "b"}}); len(b) != 2 || b[0].GetKey() != "s01" || b[1].GetKey() != "b" {
		t.Errorf("batch: %v", b)
	}
}

// TestNodeStatusToProto: every field of the status comes from its source.
func TestNodeStatusToProto(t *testing.T) {
	g := governor.Status{Shedding: true, Other: 0.25, Own: 0.5, High: 0.75, Low: 0.625, Transitions: 9}
	c := Counters{Sessions: 3, QueuedBytes: 4, Transformed: 5, Raw: 6, Errors: 7}
	cfg := Config{Workers: 2, QueueMaxBytes: 8}
	want := &pb.OffloadNodeStatus{DatanodeUuid: "u", XferAddr: "x", DeterminismDomain: "d", Shedding: true, CpuOther: 0.25,
		CpuOwn: 0.5, ThresholdHigh: 0.75, ThresholdLow: 0.625, Workers: 2, CpuBudget: 2, Sessions: 3, QueuedBytes: 4,
		QueueMaxBytes: 8, SamplesTransformed: 5, SamplesRaw: 6, SampleErrors: 7, ShedTransitions: 9}
	if got := nodeStatusToProto("u", "x", "d", g, c, cfg); !proto.Equal(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
}

// TestStatusTable: the call errors get their codes at the edge, and come back (from a peer or
// the host) as the same sentinels.
func TestStatusTable(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code codes.Code
	}{
		{ErrInvalid, codes.InvalidArgument},
		{ErrNotFound, codes.NotFound},
		{ErrPermission, codes.PermissionDenied},
		{ErrUnavailable, codes.Unavailable},
		{ErrPrecondition, codes.FailedPrecondition},
		{ErrExhausted, codes.ResourceExhausted},
	} {
		err := toStatus(fmt.Errorf("open session: %w: details", tc.err))
		if status.Code(err) != tc.code || status.Convert(err).Message() != "open session: "+tc.err.Error()+": details" {
			t.Errorf("%v: %v, want %v with the whole message", tc.err, err, tc.code)
		}
		if back := fromStatus(err); !errors.Is(back, tc.err) {
			t.Errorf("%v came back as %v", tc.err, back)
		}
	}
	for _, tc := range []struct {
		name string
		err  error
		code codes.Code
	}{
		{"a status keeps its code", fmt.Errorf("block 1: %w", status.Error(codes.Aborted, "x")), codes.Aborted},
		{"the host's code through fromStatus", fmt.Errorf("block 1: %w", fromStatus(status.Error(codes.NotFound, "gone"))), codes.NotFound},
		{"deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), codes.DeadlineExceeded},
		{"anything else", errors.New("boom"), codes.Internal},
		{"nil", nil, codes.OK},
	} {
		if got := status.Code(toStatus(tc.err)); got != tc.code {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.code)
		}
	}
}
