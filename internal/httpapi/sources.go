package httpapi

import (
	"time"

	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/upstream"
)

// Source kinds.
const (
	KindMCP     = "mcp"     // an upstream MCP server
	KindCommand = "command" // a command-line program folded into tools
	KindLibrary = "library" // Go tools served in-process
)

// Source states, as internal/upstream names them. Command-line programs
// and in-process tools are always ready: they have nothing to start.
const (
	StateIdle       = "idle"
	StateStarting   = "starting"
	StateReady      = "ready"
	StateFailed     = "failed"
	StateRestarting = "restarting"
)

// SourceStatus is one source's health in /healthz and on the dashboard.
type SourceStatus struct {
	Name string `json:"name"`
	// Kind is mcp, command or library.
	Kind string `json:"kind"`
	// State is idle, starting, ready, failed or restarting.
	State string `json:"state"`
	// Transport is stdio, http or sse for an MCP server.
	Transport string `json:"transport,omitempty"`
	// Disabled sources are never started.
	Disabled bool `json:"disabled,omitempty"`
	// Error says, for a person, why the source failed or exited.
	Error string `json:"error,omitempty"`
	// StderrTail is the end of a stdio server's standard error.
	StderrTail string `json:"stderrTail,omitempty"`
	// Tools counts the source's known tools.
	Tools int `json:"tools"`
	// IdleStops counts the times an MCP server was stopped after its idle
	// timeout (it is then idle until the next request starts it again).
	IdleStops int `json:"idleStops,omitempty"`
	// Restarts counts an MCP server's start attempts after the first.
	Restarts int `json:"restarts,omitempty"`
	// FailedStarts counts an MCP server's failed starts in a row, and
	// NextStart is when toolfold tries again by itself (zero: it does not).
	FailedStarts int       `json:"failedStarts,omitempty"`
	NextStart    time.Time `json:"nextStart,omitzero"`
	// Sandbox says which rules a stdio server runs under; "none" when it
	// runs with the user's full rights.
	Sandbox string `json:"sandbox,omitempty"`
}

// sandboxNone is SourceStatus.Sandbox of a stdio server without one.
const sandboxNone = "none"

// unsandboxed names the sources that run a program with the user's full
// rights: the stdio servers without a sandbox.
func unsandboxed(sources []SourceStatus) []string {
	var names []string
	for _, s := range sources {
		if s.Sandbox == sandboxNone && !s.Disabled {
			names = append(names, s.Name)
		}
	}
	return names
}

// UpstreamSources converts the states of upstream MCP servers
// (upstream.Manager.Status) for Options.Sources.
func UpstreamSources(statuses []upstream.Status) []SourceStatus {
	out := make([]SourceStatus, len(statuses))
	for i, s := range statuses {
		out[i] = SourceStatus{Name: s.Name, Kind: KindMCP, State: string(s.State), Transport: s.Transport,
			Disabled: s.Disabled, Error: s.Error, StderrTail: s.StderrTail, Tools: s.Tools, IdleStops: s.IdleStops, Restarts: s.Restarts,
			FailedStarts: s.FailedStarts, NextStart: s.NextStart, Sandbox: s.Sandbox}
	}
	return out
}

// Health is the body of /healthz.
type Health struct {
	// Status is "serving", or "degraded" when there are sources and every
	// one that is not disabled has failed: toolfold still answers (meta-
	// tools, cached lists, errors that say why), so the endpoint still
	// says 200, and a monitor that cares reads this field.
	Status  string         `json:"status"`
	Tools   int            `json:"tools"`
	Groups  int            `json:"groups"`
	Sources []SourceStatus `json:"sources"`
	// Unsandboxed names the stdio servers that run without a sandbox,
	// with the rights of the user running toolfold.
	Unsandboxed []string `json:"unsandboxed,omitempty"`
	// Reload is the last config reload's outcome, absent before the first.
	Reload *ReloadStatus `json:"reload,omitempty"`
	// ConfigApplied is when the config now serving was applied, absent
	// when serving no config file.
	ConfigApplied time.Time `json:"configApplied,omitzero"`
}

// Health statuses.
const (
	StatusServing  = "serving"
	StatusDegraded = "degraded"
)

// healthOf sums up sources: degraded only when every source that could
// run has failed. One failed server among working ones is what the
// per-source states are for, not a reason to alarm.
func healthOf(sources []SourceStatus) string {
	failed := 0
	for _, s := range sources {
		if s.Disabled {
			continue
		}
		if s.State != StateFailed {
			return StatusServing
		}
		failed++
	}
	if failed == 0 {
		return StatusServing
	}
	return StatusDegraded
}

// visibleSources is what a request may see of the sources. A token limited
// to some groups sees only the sources of tools it reaches, and never a
// stderr tail: that is the operator's business, and a server's output may
// hold what the token's holder should not read.
func visibleSources(all []SourceStatus, cat *catalog.Catalog, access Access) []SourceStatus {
	if !access.Limited() {
		return all
	}
	reached := map[string]bool{}
	if cat != nil {
		for _, t := range cat.Tools() {
			if access.AllowsTool(t) {
				reached[t.Source] = true
			}
		}
	}
	out := []SourceStatus{}
	for _, s := range all {
		if reached[s.Name] {
			s.StderrTail = ""
			out = append(out, s)
		}
	}
	return out
}
