package apitest

import (
	"strings"
	"testing"
)

func TestPatch(t *testing.T) {
	got := patch("a: {b: 1, c: [x]}\nd: keep\n", "{a: {b: null, c: [y, z], e: new}, f: 2}")
	obj, err := Decode(got)
	if err != nil {
		t.Fatal(err)
	}
	a := obj["a"].(map[string]interface{})
	if _, ok := a["b"]; ok || len(a["c"].([]interface{})) != 2 || a["e"] != "new" || obj["d"] != "keep" || obj["f"] != int64(2) {
		t.Errorf("patch result:\n%s", got)
	}
}

func TestCheckReportsMismatches(t *testing.T) {
	for _, c := range []struct {
		c    Case
		want string
	}{
		{Case{Name: "valid object expected invalid", Object: BaseNodePool, Want: "anything"}, "accepted an invalid object"},
		{Case{Name: "invalid object expected valid", Object: npSpec(`{weight: 0}`)}, "refused a valid object"},
		{Case{Name: "wrong message", Object: npSpec(`{weight: 0}`), Want: "no such message"}, "error does not contain"},
		{Case{Name: "unknown kind", Object: "apiVersion: karpenter.sh/v1\nkind: Widget\n"}, "no CustomResourceDefinition for Widget"},
	} {
		if err := Check(c.c); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Check = %v, want an error containing %q", c.c.Name, err, c.want)
		}
	}
}

func TestTablesAreLargeEnough(t *testing.T) {
	invalid := len(InvalidNodePools()) + len(InvalidNodeClaims())
	valid := len(ValidNodePools()) + len(ValidNodeClaims())
	if invalid < 40 || valid < 10 {
		t.Errorf("%d invalid and %d valid cases; want at least 40 and 10", invalid, valid)
	}
}
