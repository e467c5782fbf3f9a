package disruption

import "testing"

func TestCapacityTypes(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string
	}{
		{nil, "unknown"},
		{[]string{""}, "unknown"},
		{[]string{"on-demand"}, "on-demand"},
		{[]string{"spot", "spot"}, "spot"},
		{[]string{"spot", "on-demand"}, "mixed"},
	} {
		if got := capacityTypes(c.in); got != c.want {
			t.Errorf("capacityTypes(%v) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := truncate("abcdefgh", 6); got != "abc..." {
		t.Errorf("truncate: %q", got)
	}
	if got := truncate("abc", 6); got != "abc" {
		t.Errorf("truncate of a short string: %q", got)
	}
}
