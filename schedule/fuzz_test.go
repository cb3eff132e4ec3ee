package schedule_test

import (
	"testing"

	"google.golang.org/protobuf/proto"

	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
	"github.com/newtricks/newtricks/schedule"
)

// FuzzScheduleSpec: a schedule arrives in every OpenSession; FromProto refuses what it cannot
// plan, and a plan of an accepted spec computes its first steps without panicking.
func FuzzScheduleSpec(f *testing.F) {
	s := &schedule.Spec{Seed: 1, GlobalBatch: 8, WorldSize: 2}
	s.Sources = append(s.Sources, schedule.Source{Name: "a", Dataset: "/data/a", Weight: 1, Graph: graph()})
	b, _ := proto.Marshal(s.ToProto())
	f.Add(b, uint16(10))
	f.Add([]byte{}, uint16(0))
	f.Fuzz(func(t *testing.T, b []byte, size uint16) {
		var m pb.ScheduleSpec
		if proto.Unmarshal(b, &m) != nil {
			return
		}
		spec, err := schedule.FromProto(&m)
		if err != nil {
			return
		}
		sizes := make([]int, len(spec.Sources))
		for i := range sizes {
			sizes[i] = 1 + int(size)%1000
		}
		p, err := schedule.NewPlan(spec, sizes, func(int, string) (int, bool) { return 0, true })
		if err != nil {
			return
		}
		for step := uint64(0); step < 3 && !p.End(step); step++ {
			slots, err := p.Step(step)
			if err != nil {
				continue
			}
			if len(slots) != spec.GlobalBatch {
				t.Fatalf("step %d has %d slots, global batch %d", step, len(slots), spec.GlobalBatch)
			}
			lo, hi := p.RankRange(0)
			if lo < 0 || hi > len(slots) || lo > hi {
				t.Fatalf("rank 0 range [%d, %d) of %d slots", lo, hi, len(slots))
			}
		}
	})
}
