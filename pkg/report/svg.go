package report

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// series is one line of a line chart: a value per bucket of step hours.
type series struct {
	name   string
	color  string
	dashed bool
	ys     []float64
}

const (
	chartW  = 900
	chartH  = 260
	marginL = 72
	marginR = 16
	marginT = 14
	marginB = 34
)

// niceStep returns a round step (1, 2 or 5 × 10^k) that cuts span into about n parts.
func niceStep(span float64, n int) float64 {
	if span <= 0 {
		return 1
	}
	raw := span / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			return m * mag
		}
	}
	return 10 * mag
}

// lineChart draws series over time as an inline SVG. stepHours is the bucket width; the x
// axis is in days when the span is two days or more, else in hours. yMax ≤ 0 scales to the
// data.
func lineChart(lines []series, stepHours float64, yFmt func(float64) string, yMax float64) string {
	n := 0
	top := 0.0
	for _, l := range lines {
		n = max(n, len(l.ys))
		for _, y := range l.ys {
			top = max(top, y)
		}
	}
	if yMax > 0 {
		top = yMax
	}
	if top <= 0 {
		top = 1
	}
	yStep := niceStep(top, 5)
	top = math.Ceil(top/yStep) * yStep
	spanH := float64(n) * stepHours
	unit, unitName := 1.0, "hours"
	if spanH >= 48 {
		unit, unitName = 24, "days"
	}
	xSpan := math.Max(spanH/unit, 1e-9)
	pw, ph := float64(chartW-marginL-marginR), float64(chartH-marginT-marginB)
	x := func(v float64) float64 { return marginL + v/xSpan*pw }
	y := func(v float64) float64 { return marginT + ph - v/top*ph }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg viewBox="0 0 %d %d" width="100%%" role="img" xmlns="http://www.w3.org/2000/svg">`, chartW, chartH)
	for v := 0.0; v <= top+yStep/2; v += yStep {
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" class="grid"/>`, marginL, y(v), chartW-marginR, y(v))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" class="tick" text-anchor="end">%s</text>`, marginL-6, y(v)+4, html.EscapeString(yFmt(v)))
	}
	xStep := niceStep(xSpan, 8)
	for v := 0.0; v <= xSpan+xStep/1e6; v += xStep {
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" class="tick" text-anchor="middle">%s</text>`, x(v), chartH-marginB+16, trimFloat(v))
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" class="tick" text-anchor="end">%s</text>`, chartW-marginR, chartH-4, unitName)
	for _, l := range lines {
		if len(l.ys) == 0 {
			continue
		}
		var pts strings.Builder
		for i, v := range l.ys {
			t := (float64(i) + 0.5) * stepHours / unit
			fmt.Fprintf(&pts, "%.1f,%.1f ", x(t), y(math.Min(v, top)))
		}
		dash := ""
		if l.dashed {
			dash = ` stroke-dasharray="6 4"`
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.5"%s points="%s"><title>%s</title></polyline>`,
			l.color, dash, strings.TrimSpace(pts.String()), html.EscapeString(l.name))
	}
	b.WriteString(`</svg>`)
	return b.String()
}

func trimFloat(v float64) string {
	s := fmt.Sprintf("%.2f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}

// bar is one bar of a bar chart.
type bar struct {
	label string
	value float64
	color string
	note  string
}

// barChart draws horizontal bars with their values.
func barChart(bars []bar, format func(float64) string) string {
	const rowH, labelW, valueW = 30, 140, 190
	top := 0.0
	for _, b := range bars {
		top = max(top, b.value)
	}
	if top <= 0 {
		top = 1
	}
	h := rowH*len(bars) + 8
	var b strings.Builder
	fmt.Fprintf(&b, `<svg viewBox="0 0 %d %d" width="100%%" role="img" xmlns="http://www.w3.org/2000/svg">`, chartW, h)
	for i, br := range bars {
		yy := 4 + i*rowH
		w := (chartW - labelW - valueW) * br.value / top
		fmt.Fprintf(&b, `<text x="%d" y="%d" class="label" text-anchor="end">%s</text>`, labelW-8, yy+19, html.EscapeString(br.label))
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s" rx="2"/>`, labelW, yy+4, w, rowH-10, br.color)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" class="label">%s</text>`, float64(labelW)+w+8, yy+19, html.EscapeString(format(br.value)+br.note))
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// segment is a part of a stacked bar.
type segment struct {
	label string
	value float64
	color string
}

// stackedBar draws one 100% bar split into segments, with a legend below.
func stackedBar(segs []segment, format func(float64) string) string {
	total := 0.0
	for _, s := range segs {
		total += s.value
	}
	if total <= 0 {
		return `<p class="muted">nothing launched</p>`
	}
	legendRows := (len(segs) + 2) / 3
	h := 34 + 20*legendRows
	var b strings.Builder
	fmt.Fprintf(&b, `<svg viewBox="0 0 %d %d" width="100%%" role="img" xmlns="http://www.w3.org/2000/svg">`, chartW, h)
	x := 0.0
	for _, s := range segs {
		w := float64(chartW) * s.value / total
		fmt.Fprintf(&b, `<rect x="%.1f" y="4" width="%.1f" height="22" fill="%s"><title>%s: %s (%.0f%%)</title></rect>`,
			x, w, s.color, html.EscapeString(s.label), html.EscapeString(format(s.value)), 100*s.value/total)
		x += w
	}
	for i, s := range segs {
		lx, ly := (i%3)*300, 34+(i/3)*20
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/>`, lx, ly, s.color)
		fmt.Fprintf(&b, `<text x="%d" y="%d" class="label">%s %s (%.0f%%)</text>`, lx+18, ly+11, html.EscapeString(s.label), html.EscapeString(format(s.value)), 100*s.value/total)
	}
	b.WriteString(`</svg>`)
	return b.String()
}
