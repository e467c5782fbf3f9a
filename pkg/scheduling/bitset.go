package scheduling

import "math/bits"

// Bitset is a set of small non-negative integers (instance-type indices, zone indices, ...),
// one bit each. Hot paths narrow sets with word-wide AND instead of walking maps.
type Bitset []uint64

// NewBitset returns an empty set with room for n members.
func NewBitset(n int) Bitset { return make(Bitset, (n+63)/64) }

// FullBitset returns the set {0, ..., n-1}.
func FullBitset(n int) Bitset {
	b := NewBitset(n)
	for i := range b {
		b[i] = ^uint64(0)
	}
	if r := n % 64; r != 0 {
		b[len(b)-1] = (1 << r) - 1
	}
	return b
}

// Set adds i.
func (b Bitset) Set(i int) { b[i>>6] |= 1 << (i & 63) }

// Clear removes i.
func (b Bitset) Clear(i int) { b[i>>6] &^= 1 << (i & 63) }

// Has reports whether i is a member.
func (b Bitset) Has(i int) bool { return i>>6 < len(b) && b[i>>6]&(1<<(i&63)) != 0 }

// Clone returns a copy.
func (b Bitset) Clone() Bitset { return append(Bitset(nil), b...) }

// And keeps only the members also in o (o must have the same length).
func (b Bitset) And(o Bitset) {
	for i := range b {
		b[i] &= o[i]
	}
}

// AndNot removes the members of o.
func (b Bitset) AndNot(o Bitset) {
	for i := range b {
		b[i] &^= o[i]
	}
}

// Or adds the members of o.
func (b Bitset) Or(o Bitset) {
	for i := range b {
		b[i] |= o[i]
	}
}

// Intersects reports whether b and o share a member.
func (b Bitset) Intersects(o Bitset) bool {
	for i := range b {
		if b[i]&o[i] != 0 {
			return true
		}
	}
	return false
}

// IsEmpty reports whether b has no members.
func (b Bitset) IsEmpty() bool {
	for _, w := range b {
		if w != 0 {
			return false
		}
	}
	return true
}

// Count is the number of members.
func (b Bitset) Count() int {
	n := 0
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return n
}

// Next returns the least member ≥ i, or -1.
func (b Bitset) Next(i int) int {
	w := i >> 6
	if w >= len(b) {
		return -1
	}
	word := b[w] >> (i & 63)
	if word != 0 {
		return i + bits.TrailingZeros64(word)
	}
	for w++; w < len(b); w++ {
		if b[w] != 0 {
			return w<<6 + bits.TrailingZeros64(b[w])
		}
	}
	return -1
}

// Equal reports whether b and o have the same members (and length).
func (b Bitset) Equal(o Bitset) bool {
	if len(b) != len(o) {
		return false
	}
	for i := range b {
		if b[i] != o[i] {
			return false
		}
	}
	return true
}
