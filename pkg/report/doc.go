// Package report writes what `tenon simulate` found: a terminal summary (WriteSummary), the
// whole report as JSON for scripts (WriteJSON), and a self-contained HTML page with inline SVG
// plots that needs no network and no script to view (WriteHTML).
//
// Every writer takes a *sim.Report and formats it; none computes anything the simulation did
// not, so the three always agree.
package report
