package bound

import (
	"slices"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize/convex/lp"

	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// The LP oracles build the covering and configuration LPs of a small problem in full, straight
// from their definitions, and solve them with gonum's dense simplex. They share no code with the
// package and check that its column generation reaches the same optima.

// reduced is the problem the bounds actually see: p after prepare's reductions (classes merged,
// classes demanding nothing dropped, dominated types dropped, identical limited types merged).
// Some reductions (a type whose effective capacity another covers) raise the LPs while keeping
// the optimum, so the LP checks compare with the LPs of the reduced problem.
func reduced(p *Problem) *Problem {
	in, status := prepare(p)
	if status != solvable || in.nK == 0 {
		return p
	}
	q := &Problem{}
	for t := 0; t < in.nT; t++ {
		var c scheduling.Resources
		for j, r := range in.res {
			c[r] = in.capa[t*in.nR+j]
		}
		q.Types = append(q.Types, Type{Price: in.price[t], Capacity: c, MaxCount: int(in.limit[t])})
	}
	for _, g := range in.gcap {
		q.Groups = append(q.Groups, Group{PerNode: int(g)})
	}
	for k := 0; k < in.nK; k++ {
		var d scheduling.Resources
		for j, r := range in.res {
			d[r] = in.dem[k*in.nR+j]
		}
		var types []int
		for t := 0; t < in.nT; t++ {
			if in.tBits[t*in.words+k/64]&(1<<(k%64)) != 0 {
				types = append(types, t)
			}
		}
		q.Classes = append(q.Classes, Class{Count: int(in.count[k]), Demand: d, Types: types, Group: in.group[k]})
	}
	return q
}

// relevant lists the resource slots some counted pod demands.
func relevant(p *Problem) []int {
	var res []int
	for r := 0; r < scheduling.NumResources; r++ {
		for _, c := range p.Classes {
			if c.Count > 0 && c.Demand[r] > 0 {
				res = append(res, r)
				break
			}
		}
	}
	return res
}

// fitting lists the types a class may use that hold one of its pods.
func fitting(p *Problem, c Class) []int {
	var out []int
	for _, t := range c.Types {
		if c.Demand.FitsIn(p.Types[t].Capacity) && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// standardLP solves min c·x s.t. A x = b, x ≥ 0 (rows of A given densely).
func standardLP(c []float64, rows [][]float64, b []float64) (float64, error) {
	a := mat.NewDense(len(rows), len(c), nil)
	for i, r := range rows {
		a.SetRow(i, r)
	}
	v, _, err := lp.Simplex(c, a, b, 1e-10, nil)
	return v, err
}

// coveringLP: variables x_t, y_kt (fitting pairs), capacity slacks, limit slacks.
func coveringLP(p *Problem) (float64, error) {
	res := relevant(p)
	type pair struct{ k, t int }
	var pairs []pair
	var classes []int
	for k, c := range p.Classes {
		if c.Count <= 0 {
			continue
		}
		classes = append(classes, k)
		for _, t := range fitting(p, c) {
			pairs = append(pairs, pair{k, t})
		}
	}
	nT := len(p.Types)
	var limited []int
	for t, ty := range p.Types {
		if ty.MaxCount > 0 {
			limited = append(limited, t)
		}
	}
	nVar := nT + len(pairs) + nT*len(res) + len(limited)
	nRow := len(classes) + nT*len(res) + len(limited)
	c := make([]float64, nVar)
	rows := make([][]float64, nRow)
	b := make([]float64, nRow)
	for i := range rows {
		rows[i] = make([]float64, nVar)
	}
	for t := range p.Types {
		c[t] = p.Types[t].Price
	}
	for i, k := range classes {
		b[i] = float64(p.Classes[k].Count)
		for j, pr := range pairs {
			if pr.k == k {
				rows[i][nT+j] = 1
			}
		}
	}
	capRow := func(t, r int) int { return len(classes) + t*len(res) + r }
	for t := range p.Types {
		for r, slot := range res {
			// Rows are scaled to the capacity: bytes and millicores would make gonum's
			// basis look singular.
			scale := float64(max(p.Types[t].Capacity[slot], 1))
			row := rows[capRow(t, r)]
			row[t] = -float64(p.Types[t].Capacity[slot]) / scale
			row[nT+len(pairs)+t*len(res)+r] = 1
			for j, pr := range pairs {
				if pr.t == t {
					row[nT+j] = float64(p.Classes[pr.k].Demand[slot]) / scale
				}
			}
		}
	}
	for i, t := range limited {
		row := rows[len(classes)+nT*len(res)+i]
		row[t] = 1
		row[nT+len(pairs)+nT*len(res)+i] = 1
		b[len(classes)+nT*len(res)+i] = float64(p.Types[t].MaxCount)
	}
	// gonum rejects all-zero columns: drop node variables of types nothing can use.
	keep := make([]int, 0, nVar)
	for j := 0; j < nVar; j++ {
		for _, row := range rows {
			if row[j] != 0 {
				keep = append(keep, j)
				break
			}
		}
	}
	c2 := make([]float64, len(keep))
	rows2 := make([][]float64, nRow)
	for i := range rows2 {
		rows2[i] = make([]float64, len(keep))
		for n, j := range keep {
			rows2[i][n] = rows[i][j]
		}
	}
	for n, j := range keep {
		c2[n] = c[j]
	}
	return standardLP(c2, rows2, b)
}

// configurationLP enumerates every non-empty pattern (at most n_k pods of class k) of every type
// and solves the master over all of them.
func configurationLP(p *Problem) (float64, error) {
	var classes []int
	for k, c := range p.Classes {
		if c.Count > 0 {
			classes = append(classes, k)
		}
	}
	type column struct {
		t int
		a []int
	}
	var cols []column
	for t := range p.Types {
		a := make([]int, len(classes))
		var rec func(i int)
		rec = func(i int) {
			if i == len(classes) {
				if patternFits(p, t, classes, a) {
					cols = append(cols, column{t, slices.Clone(a)})
				}
				return
			}
			k := classes[i]
			hi := p.Classes[k].Count
			if !slices.Contains(p.Classes[k].Types, t) {
				hi = 0
			}
			for q := 0; q <= hi; q++ {
				a[i] = q
				rec(i + 1)
			}
			a[i] = 0
		}
		rec(0)
	}
	var limited []int
	for t, ty := range p.Types {
		if ty.MaxCount > 0 {
			limited = append(limited, t)
		}
	}
	nVar := len(cols) + len(classes) + len(limited)
	nRow := len(classes) + len(limited)
	c := make([]float64, nVar)
	rows := make([][]float64, nRow)
	b := make([]float64, nRow)
	for i := range rows {
		rows[i] = make([]float64, nVar)
	}
	for j, col := range cols {
		c[j] = p.Types[col.t].Price
		for i, q := range col.a {
			rows[i][j] = float64(q)
		}
		if li := slices.Index(limited, col.t); li >= 0 {
			rows[len(classes)+li][j] = 1
		}
	}
	for i, k := range classes {
		rows[i][len(cols)+i] = -1
		b[i] = float64(p.Classes[k].Count)
	}
	for i, t := range limited {
		rows[len(classes)+i][len(cols)+len(classes)+i] = 1
		b[len(classes)+i] = float64(p.Types[t].MaxCount)
	}
	return standardLP(c, rows, b)
}

func patternFits(p *Problem, t int, classes, a []int) bool {
	var used scheduling.Resources
	perGroup := make([]int, len(p.Groups))
	total := 0
	for i, q := range a {
		if q == 0 {
			continue
		}
		c := p.Classes[classes[i]]
		total += q
		used = used.Add(c.Demand.Scale(int64(q)))
		if c.Group >= 0 {
			perGroup[c.Group] += q
		}
	}
	for g, n := range perGroup {
		if n > p.Groups[g].PerNode {
			return false
		}
	}
	return total > 0 && used.FitsIn(p.Types[t].Capacity)
}
