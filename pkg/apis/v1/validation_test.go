package v1_test

import (
	"testing"

	"github.com/tenon-sh/tenon/pkg/apis/apitest"
)

func runCases(t *testing.T, cases []apitest.Case) {
	t.Helper()
	seen := map[string]bool{}
	for _, c := range cases {
		if seen[c.Name] {
			t.Errorf("duplicate case name %q", c.Name)
		}
		seen[c.Name] = true
		t.Run(c.Name, func(t *testing.T) {
			if c.Old != "" {
				if err := apitest.Check(apitest.Case{Object: c.Old}); err != nil {
					t.Fatalf("old object: %v", err)
				}
			}
			if err := apitest.Check(c); err != nil {
				t.Errorf("%v\n%s", err, c.Object)
			}
		})
	}
}

func TestInvalidNodePools(t *testing.T)  { runCases(t, apitest.InvalidNodePools()) }
func TestValidNodePools(t *testing.T)    { runCases(t, apitest.ValidNodePools()) }
func TestInvalidNodeClaims(t *testing.T) { runCases(t, apitest.InvalidNodeClaims()) }
func TestValidNodeClaims(t *testing.T)   { runCases(t, apitest.ValidNodeClaims()) }
