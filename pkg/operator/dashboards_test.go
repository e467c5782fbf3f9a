package operator

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tenon-sh/tenon/pkg/metrics"
)

// promqlWords are PromQL's keywords, aggregation operators and modifiers: identifiers that are
// not metric names even when no parenthesis follows (sum by (x) (...)).
var promqlWords = []string{"by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless", "bool", "offset", "inf", "nan",
	"sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values", "bottomk", "topk", "quantile", "limitk", "limit_ratio"}

// metricNames returns the metric names a PromQL expression (or a Grafana label_values query)
// selects: identifiers outside strings, label matchers, ranges and grouping lists, that are not
// function calls, keywords or Grafana variables.
func metricNames(expr string) []string {
	// Grafana's label_values(metric, label) names a label after the metric.
	if rest, ok := strings.CutPrefix(strings.TrimSpace(expr), "label_values("); ok {
		expr, _, _ = strings.Cut(rest, ",")
	}
	var out []string
	depthBrace, inString := 0, byte(0)
	grouping := false // inside by (...), without (...), on (...), ignoring (...), group_*(...)
	lastWord := ""
	for i := 0; i < len(expr); i++ {
		ch := expr[i]
		switch {
		case inString != 0:
			if ch == '\\' {
				i++
			} else if ch == inString {
				inString = 0
			}
			continue
		case ch == '"' || ch == '\'' || ch == '`':
			inString = ch
			continue
		case ch == '{':
			depthBrace++
			continue
		case ch == '}':
			depthBrace--
			continue
		case ch == '[':
			for i < len(expr) && expr[i] != ']' {
				i++
			}
			continue
		case ch == '(':
			if slices.Contains([]string{"by", "without", "on", "ignoring", "group_left", "group_right"}, lastWord) {
				grouping = true
			}
			continue
		case ch == ')':
			grouping = false
			continue
		case ch >= '0' && ch <= '9' && depthBrace == 0:
			// A number (1, 0.99, 1e9, 0x1F): none of it is a name.
			for i+1 < len(expr) && (isLetter(expr[i+1]) || expr[i+1] == '.' || (expr[i+1] >= '0' && expr[i+1] <= '9')) {
				i++
			}
			lastWord = ""
			continue
		}
		if depthBrace > 0 || !(ch == '_' || ch == ':' || ch == '$' || isLetter(ch)) {
			if ch != ' ' && ch != '\t' && ch != '\n' {
				lastWord = ""
			}
			continue
		}
		j := i
		for j < len(expr) && (expr[j] == '_' || expr[j] == ':' || expr[j] == '$' || isLetter(expr[j]) || (expr[j] >= '0' && expr[j] <= '9')) {
			j++
		}
		word := expr[i:j]
		i = j - 1
		k := j
		for k < len(expr) && (expr[k] == ' ' || expr[k] == '\t' || expr[k] == '\n') {
			k++
		}
		call := k < len(expr) && expr[k] == '('
		lastWord = word
		if grouping || call || strings.HasPrefix(word, "$") || slices.Contains(promqlWords, strings.ToLower(word)) {
			continue
		}
		out = append(out, word)
	}
	return out
}

func isLetter(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

func TestMetricNamesOfPromQL(t *testing.T) {
	for expr, want := range map[string][]string{
		`histogram_quantile(0.99, sum by (le, method) (rate(karpenter_cloudprovider_duration_seconds_bucket{controller="x", method=~"Create|Get"}[$__rate_interval])))`: {"karpenter_cloudprovider_duration_seconds_bucket"},
		`sum(rate(a_total[5m])) / on (nodepool) group_left (zone) b_total > bool 1`:                                                                                     {"a_total", "b_total"},
		`label_values(karpenter_nodepools_usage, nodepool)`:                                                                                                             {"karpenter_nodepools_usage"},
		`60 * sum(rate(x_count[1m])) or vector(0)`:                                                                                                                      {"x_count"},
		`karpenter_pods_state{name="by (x)"} unless karpenter_build_info`:                                                                                               {"karpenter_pods_state", "karpenter_build_info"},
	} {
		if got := metricNames(expr); !slices.Equal(got, want) {
			t.Errorf("metricNames(%s) = %v, want %v", expr, got, want)
		}
	}
}

// queries returns every PromQL expression of a dashboard: its panels' targets and its
// templating queries.
func queries(t *testing.T, path string) []string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		UID    string `json:"uid"`
		Title  string `json:"title"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Type  string          `json:"type"`
				Query json.RawMessage `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if d.UID == "" || d.Title == "" || len(d.Panels) == 0 {
		t.Fatalf("%s: a dashboard needs a uid, a title and panels", path)
	}
	var out []string
	for _, p := range d.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("%s: panel %q queries nothing", path, p.Title)
		}
		for _, tg := range p.Targets {
			if strings.TrimSpace(tg.Expr) == "" {
				t.Errorf("%s: panel %q has an empty query", path, p.Title)
			}
			out = append(out, tg.Expr)
		}
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q struct {
			Query string `json:"query"`
		}
		if json.Unmarshal(v.Query, &q) != nil {
			_ = json.Unmarshal(v.Query, &q.Query)
		}
		out = append(out, q.Query)
	}
	return out
}

func TestDashboardsQueryExportedMetrics(t *testing.T) {
	live := exported(t)
	files, err := filepath.Glob(filepath.Join("..", "..", "charts", "tenon", "dashboards", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 3 {
		t.Fatalf("want the capacity-and-cost, performance and disruption dashboards, found %v", files)
	}
	for _, f := range files {
		names := 0
		for _, q := range queries(t, f) {
			ms := metricNames(q)
			if len(ms) == 0 {
				t.Errorf("%s: %q queries no metric", filepath.Base(f), q)
			}
			for _, m := range ms {
				names++
				if !isExported(live, m) {
					t.Errorf("%s queries %s, which tenon does not export (%q)", filepath.Base(f), m, q)
				}
			}
		}
		if names == 0 {
			t.Errorf("%s queries no metric", f)
		}
	}
}

// isExported reports whether name is an exported metric, or a series of one: a histogram's
// _bucket, _sum or _count, a summary's _sum or _count.
func isExported(live map[string]metrics.Metric, name string) bool {
	if _, ok := live[name]; ok {
		return true
	}
	for suffix, types := range map[string][]string{"_bucket": {"histogram"}, "_sum": {"histogram", "summary"}, "_count": {"histogram", "summary"}} {
		if base, ok := strings.CutSuffix(name, suffix); ok {
			if m, ok := live[base]; ok && slices.Contains(types, m.Type) {
				return true
			}
		}
	}
	return false
}
