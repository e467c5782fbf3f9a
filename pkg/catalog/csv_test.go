package catalog

import (
	_ "embed"
	"strings"
	"testing"
)

// instanceTypesShortCSV is the short form of the type table. The package does not use it; the
// test checks that it agrees with the extended file on every column they share.
//
//go:embed data/instance_types.csv
var instanceTypesShortCSV string

func TestShortTableAgrees(t *testing.T) {
	header, _, _ := strings.Cut(instanceTypesShortCSV, "\n")
	cols := strings.Split(strings.TrimSuffix(header, "\r"), ",")
	short := map[string]string{}
	err := scanCSV("instance_types.csv", instanceTypesShortCSV, cols, func(f []string) error {
		short[f[0]] = strings.Join(f, ",")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	err = scanCSV("instance_types_extended.csv", instanceTypesCSV, cols, func(f []string) error {
		n++
		if got, want := short[f[0]], strings.Join(f, ","); got != want {
			t.Errorf("%s: short %q, extended %q", f[0], got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != len(short) {
		t.Errorf("extended has %d types, short %d", n, len(short))
	}
}

func TestScanCSV(t *testing.T) {
	tests := []struct {
		name, data string
		want       string // the rows read, joined; or the error's text
		err        bool
	}{
		{"reorders columns", "b,a,c\n2,1,3\r\n\n5,4,6\n", "1/2 4/5", false},
		{"missing column", "b,c\n1,2\n", "no column", true},
		{"short row", "a,b\n1\n", "instance:2: 1 fields, want 2", true},
		{"long row", "a,b\n1,2,3\n", "3 fields", true},
		{"quotes", "a,b\n\"1\",2\n", "quoted", true},
		{"header only", "a,b", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rows []string
			err := scanCSV("instance", tt.data, []string{"a", "b"}, func(f []string) error {
				rows = append(rows, f[0]+"/"+f[1])
				return nil
			})
			if tt.err {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("error %v, want one containing %q", err, tt.want)
				}
				return
			}
			if err != nil || strings.Join(rows, " ") != tt.want {
				t.Errorf("rows %q err %v, want %q", rows, err, tt.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	header, _, _ := strings.Cut(instanceTypesCSV, "\n")
	m5 := "m5.large,m5,5,m,amd64,2,8192,,,,,29,0.75,,0.096,,large,intel,nitro,,4750,750,1930,7134,17Gi,,9,,3,10,3,29,false,x"
	tests := []struct{ name, row, want string }{
		{"bad vcpu", strings.Replace(m5, ",2,8192,", ",two,8192,", 1), "vcpu"},
		{"negative memory", strings.Replace(m5, ",2,8192,", ",2,-1,", 1), "memory_mib"},
		{"bad price", strings.Replace(m5, ",0.096,", ",cheap,", 1), "od_price_us_east_1"},
		{"bad arch", strings.Replace(m5, "amd64", "sparc", 1), "arch"},
		{"bad accelerator", strings.Replace(m5, "nitro,,", "nitro,fpga,", 1), "accelerator_type"},
		{"bad bool", strings.Replace(m5, ",false,x", ",maybe,x", 1), "bare_metal"},
		{"duplicate", m5 + "\n" + m5, "twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseTable(header+"\n"+tt.row+"\n", "instance_type,region,zone_id,spot_price_usd_hr\n", strings.Join(advisorColumns, ",")+"\n")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one mentioning %q", err, tt.want)
			}
		})
	}
	if _, err := parseTable(header+"\n"+m5+"\n", "instance_type,region,zone_id,spot_price_usd_hr\nnope.large,us-east-1,use1-az1,1\n", strings.Join(advisorColumns, ",")+"\n"); err == nil {
		t.Error("a spot price for an unknown type was accepted")
	}
}

// FuzzParseTable checks that the parser never panics and that whatever it accepts is usable.
func FuzzParseTable(f *testing.F) {
	head := func(s string, lines int) string {
		parts := strings.SplitAfterN(s, "\n", lines+1)
		return strings.Join(parts[:min(lines, len(parts))], "")
	}
	f.Add(head(instanceTypesCSV, 20), head(spotPricesCSV, 20), head(spotAdvisorCSV, 20))
	f.Add(head(instanceTypesCSV, 2), "instance_type,region,zone_id,spot_price_usd_hr\n", "region,instance_type,savings_vs_ondemand_pct,interruption_bucket,interruption_label,interruption_max_pct\n")
	f.Fuzz(func(t *testing.T, types, spot, advisor string) {
		tb, err := parseTable(types, spot, advisor)
		if err != nil {
			return
		}
		for _, region := range Regions() {
			if _, err := tb.build(region, newSettings(nil)); err != nil {
				t.Fatalf("parsed table does not build for %s: %v", region, err)
			}
		}
	})
}
