package schedule

import "sort"

// Holding is what the ownership function knows about one slot of a step: the sample's
// estimated transform cost and, per session member, how many of the sample's bytes that
// member's DataNode stores (0: none).
type Holding struct {
	Cost  int64
	Bytes []int64 // one per member, in member order
}

// Owners assigns every slot of a step to one member, deterministically, so that a reader and
// every DataNode of a session compute the same assignment from the same inputs:
//
//  1. Slots are taken in decreasing cost, ties in increasing slot position.
//  2. A slot's candidates are the members that hold the most bytes of its sample (all
//     replica holders for a sample inside one block; the holders of its largest part for a
//     sample that spans blocks). No member holds any byte: the slot has no owner (-1) and
//     the reader reads it itself.
//  3. Among the candidates the one with the least cost assigned so far in this step wins;
//     ties go to the first candidate at or after position H64("own", seed, step, slot) mod
//     len(members) in member order (wrapping around).
//
// Heavy samples are so spread over the nodes that hold them instead of piling onto one.
// members is the number of members; the result has one entry per slot.
func Owners(seed, step uint64, members int, slots []Holding) []int {
	order := make([]int, len(slots))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return slots[order[a]].Cost > slots[order[b]].Cost })
	load := make([]int64, members)
	out := make([]int, len(slots))
	for _, i := range order {
		h := slots[i]
		var most int64
		for m := 0; m < members && m < len(h.Bytes); m++ {
			most = max(most, h.Bytes[m])
		}
		out[i] = -1
		if most == 0 {
			continue
		}
		start := int(H64("own", seed, step, uint64(i)) % uint64(members))
		best := -1
		for k := 0; k < members; k++ {
			m := (start + k) % members
			if m >= len(h.Bytes) || h.Bytes[m] != most {
				continue
			}
			if best < 0 || load[m] < load[best] {
				best = m
			}
		}
		out[i] = best
		load[best] += h.Cost
	}
	return out
}
