package bound

import "math"

// split divides the instance into independent parts: the connected components of "class k may
// use type t". Pods of different parts can never share a node, and a limited type belongs to
// one part, so the optimum is the sum of the parts' optima and bounds of the parts add up. Parts
// are ordered by their lowest class, their classes and types keep their relative order.
func (in *instance) split() []*instance {
	parent := make([]int, in.nK)
	for k := range parent {
		parent[k] = k
	}
	var find func(int) int
	find = func(k int) int {
		for parent[k] != k {
			parent[k] = parent[parent[k]]
			k = parent[k]
		}
		return k
	}
	for t := 0; t < in.nT; t++ {
		first := find(int(in.tCls[in.tOff[t]]))
		for i := in.tOff[t] + 1; i < in.tOff[t+1]; i++ {
			if r := find(int(in.tCls[i])); r != first {
				parent[max(r, first)] = min(r, first)
				first = min(r, first)
			}
		}
	}
	part := make([]int, in.nK) // part of each class
	var roots []int
	for k := range part {
		r := find(k)
		if r == k {
			part[k] = len(roots)
			roots = append(roots, k)
		} else {
			part[k] = part[r]
		}
	}
	if len(roots) == 1 {
		return []*instance{in}
	}
	parts := make([]*instance, len(roots))
	newIndex := make([]int32, in.nK)
	nK := make([]int, len(roots))
	nT := make([]int, len(roots))
	entries := make([]int, len(roots))
	for k := range part {
		nK[part[k]]++
	}
	for t := 0; t < in.nT; t++ {
		p := part[in.tCls[in.tOff[t]]]
		nT[p]++
		entries[p] += int(in.tOff[t+1] - in.tOff[t])
	}
	for i := range parts {
		s := &instance{nR: in.nR, res: in.res, gcap: in.gcap, anyNode: math.Inf(1)}
		s.count = make([]int64, 0, nK[i])
		s.members = make([][]int, 0, nK[i])
		s.dem = make([]int64, 0, nK[i]*in.nR)
		s.group = make([]int, 0, nK[i])
		s.reserve(nT[i], entries[i])
		parts[i] = s
	}
	for k := 0; k < in.nK; k++ {
		s := parts[part[k]]
		newIndex[k] = int32(s.nK)
		s.nK++
		s.count = append(s.count, in.count[k])
		s.members = append(s.members, in.members[k])
		s.dem = append(s.dem, in.dem[k*in.nR:(k+1)*in.nR]...)
		s.group = append(s.group, in.group[k])
		s.totalPods += in.count[k]
	}
	nR := in.nR
	for t := 0; t < in.nT; t++ {
		s := parts[part[in.tCls[in.tOff[t]]]]
		s.tOff = append(s.tOff, int32(len(s.tCls)))
		s.orig = append(s.orig, in.orig[t])
		s.origs = append(s.origs, in.origs[t])
		s.price = append(s.price, in.price[t])
		s.anyNode = min(s.anyNode, in.price[t])
		s.maxPrice = max(s.maxPrice, in.price[t])
		s.capa = append(s.capa, in.capa[t*nR:(t+1)*nR]...)
		s.inv = append(s.inv, in.inv[t*nR:(t+1)*nR]...)
		s.limit = append(s.limit, in.limit[t])
		s.weight = append(s.weight, in.weight[t])
		lo, hi := int(in.tOff[t]), int(in.tOff[t+1])
		for i := lo; i < hi; i++ {
			s.tCls = append(s.tCls, newIndex[in.tCls[i]])
		}
		s.tU = append(s.tU, in.tU[lo:hi]...)
		s.tE = append(s.tE, in.tE[lo*nR:hi*nR]...)
		s.tR = append(s.tR, in.tR[lo*nR:hi*nR]...)
		s.nT++
	}
	for _, s := range parts {
		s.tOff = append(s.tOff, int32(len(s.tCls)))
		s.words = (s.nK + 63) / 64
		s.tBits = make([]uint64, s.nT*s.words)
		for t := 0; t < s.nT; t++ {
			for i := s.tOff[t]; i < s.tOff[t+1]; i++ {
				k := s.tCls[i]
				s.tBits[t*s.words+int(k)/64] |= 1 << (k % 64)
			}
		}
	}
	return parts
}
