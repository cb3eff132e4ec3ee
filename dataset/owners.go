package dataset

import (
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
	"github.com/newtricks/newtricks/schedule"
)

// StepOwners computes the slots of a step and the member owning each (schedule.Owners over
// the sources' indexes and block locations): the function a reader and every DataNode of a
// session evaluate identically. files[source][file] are the located blocks of the index's
// files; members are DataNode UUIDs in session order.
func StepOwners(p *schedule.Plan, idx []*Index, files [][]*pb.LocatedBlocks, members []string, step uint64) ([]schedule.Slot, []int, error) {
	slots, err := p.Step(step)
	if err != nil {
		return nil, nil, err
	}
	hs := make([]schedule.Holding, len(slots))
	for i, sl := range slots {
		smp := idx[sl.Source].Sample(sl.Index)
		hs[i] = schedule.Holding{Cost: smp.GetCost(),
			Bytes: HeldBytes(files[sl.Source][smp.GetFile()], smp.GetOffset(), smp.GetLength(), members)}
	}
	return slots, schedule.Owners(p.Spec().Seed, step, len(members), hs), nil
}
