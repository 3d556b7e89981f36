// Package metrics exposes what the gateway does as Prometheus metrics:
// tool calls by tool, source and outcome, their duration, the sessions by
// mode and those open by endpoint, the state and restarts of every source,
// the tokens of each mode's first tool list, and the panics recovered in
// request handlers. It is the one package that knows the
// Prometheus client; the gateway only sees a small observer interface.
package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Source is one source's state at scrape time.
type Source struct {
	Name, Kind, State string
	Tools             int
	// IdleStops counts the times an upstream server was stopped for
	// idleness (its state is then "idle" until the next request).
	IdleStops int
	// Restarts counts an upstream server's start attempts after the
	// first (after a crash, a failed start or an idle stop).
	Restarts int
	// Held counts the source's definitions held by the trust gate (changed
	// or new since they were pinned, see internal/trust); MCP servers only.
	Held int
}

// Gauges are read at every scrape; a nil func is left out.
type Gauges struct {
	// OpenSessions counts the HTTP sessions open now, by endpoint.
	OpenSessions func() map[string]int
	// InitialTokens is what a new client's first tools/list costs in
	// tokens, by the mode it is served: the context the folding saves.
	InitialTokens func() map[string]int
	// AnswerBytesInFlight is the bytes of answers held for clients that
	// have not read them yet (bounded by answerBytesInFlight).
	AnswerBytesInFlight func() int64
}

// Metrics records the gateway's activity. The zero value is not usable;
// build one with New.
type Metrics struct {
	registry *prometheus.Registry
	calls    *prometheus.CounterVec
	duration *prometheus.HistogramVec
	sessions *prometheus.CounterVec
	panics   *prometheus.CounterVec
	reloads  *prometheus.CounterVec
}

// New registers toolfold's metrics, and the Go runtime's, in a registry of
// their own. sources, if not nil, is read at every scrape.
func New(sources func() []Source) *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolfold_tool_calls_total",
			Help: "Tool calls answered, by wire tool, the meta-tool they came through (via: call_tool, or empty), source and outcome (ok; tool_error: the tool said it failed; crash: its server exited during the call; timeout: no answer within the server's timeout; unavailable: the server could not be started; refused: never reached a tool; internal_error: toolfold failed while answering, see toolfold_handler_panics_total).",
		}, []string{"tool", "via", "source", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "toolfold_tool_call_duration_seconds",
			Help:    "Time from a tools/call reaching toolfold to its answer, by wire tool and source.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10), // 0.5 ms .. ~2 min
		}, []string{"tool", "source"}),
		sessions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolfold_sessions_total",
			Help: "Client sessions started, by the mode they were served.",
		}, []string{"mode"}),
		panics: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolfold_handler_panics_total",
			Help: "Panics in a request's handler, by the path the request took (typed, stdio-bytes, http-request-bytes, http-session-bytes, http): each failed its request with an internal error and left the gateway serving; the stack is in the log.",
		}, []string{"path"}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolfold_config_reloads_total",
			Help: "Config reloads asked for (file change, SIGHUP, POST /api/reload), by result (applied: the new config serves now; refused: the new config has problems and the old one keeps serving; needs_restart: valid, but it can only apply at the next start; failed: valid, but it could not be applied; unchanged).",
		}, []string{"result"}),
	}
	m.registry.MustRegister(m.calls, m.duration, m.sessions, m.panics, m.reloads,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if sources != nil {
		m.registry.MustRegister(&sourceCollector{sources: sources})
	}
	return m
}

// ToolCalled records one tools/call. A call through call_tool counts under
// the tool it reached, with via="call_tool", so a search-mode client's calls
// show per tool. source is empty for calls refused before they reached a
// tool.
func (m *Metrics) ToolCalled(tool, via, source, outcome string, took time.Duration) {
	m.calls.WithLabelValues(tool, via, source, outcome).Inc()
	if source != "" {
		m.duration.WithLabelValues(tool, source).Observe(took.Seconds())
	}
}

// Read registers gauges read at every scrape. Call it once, before the
// first scrape.
func (m *Metrics) Read(g Gauges) {
	m.registry.MustRegister(&gaugeCollector{g: g})
}

// SessionStarted records a new client session in a mode.
func (m *Metrics) SessionStarted(mode string) { m.sessions.WithLabelValues(mode).Inc() }

// HandlerPanicked records a panic recovered in a request's handler.
func (m *Metrics) HandlerPanicked(path string) { m.panics.WithLabelValues(path).Inc() }

// ConfigReloaded records one config reload by its result.
func (m *Metrics) ConfigReloaded(result string) { m.reloads.WithLabelValues(result).Inc() }

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

var (
	sourceUp = prometheus.NewDesc("toolfold_source_up",
		"1 when a source is ready, 0 otherwise; the state label says which.", []string{"source", "kind", "state"}, nil)
	sourceTools = prometheus.NewDesc("toolfold_source_tools",
		"Tools known from a source.", []string{"source", "kind"}, nil)
	sourceIdleStops = prometheus.NewDesc("toolfold_source_idle_stops_total",
		"Times a source was stopped after its idle timeout; it starts again on the next request.", []string{"source", "kind"}, nil)
	sourceHeld = prometheus.NewDesc("toolfold_source_held_items",
		"Definitions of an upstream server held until approved (toolfold pins approve): changed or new since they were pinned in the lock file.", []string{"source"}, nil)
	sourceRestarts = prometheus.NewDesc("toolfold_source_restarts_total",
		"Start attempts of a source after its first: after a crash, a failed start or an idle stop.", []string{"source", "kind"}, nil)
	openSessions = prometheus.NewDesc("toolfold_sessions_open",
		"HTTP sessions open now, by endpoint (main, group:<id>, limited).", []string{"endpoint"}, nil)
	initialTokens = prometheus.NewDesc("toolfold_initial_list_tokens",
		"Tokens of the first tools/list a new client gets, by the mode it is served.", []string{"mode"}, nil)
	answerBytes = prometheus.NewDesc("toolfold_answer_bytes_in_flight",
		"Bytes of answers held for clients that have not read them yet; answerBytesInFlight bounds it.", nil, nil)
)

// gaugeCollector reads Gauges when scraped.
type gaugeCollector struct{ g Gauges }

var _ prometheus.Collector = (*gaugeCollector)(nil)

func (c *gaugeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- openSessions
	ch <- initialTokens
	ch <- answerBytes
}

func (c *gaugeCollector) Collect(ch chan<- prometheus.Metric) {
	if c.g.OpenSessions != nil {
		for ep, n := range c.g.OpenSessions() {
			ch <- prometheus.MustNewConstMetric(openSessions, prometheus.GaugeValue, float64(n), ep)
		}
	}
	if c.g.AnswerBytesInFlight != nil {
		ch <- prometheus.MustNewConstMetric(answerBytes, prometheus.GaugeValue, float64(c.g.AnswerBytesInFlight()))
	}
	if c.g.InitialTokens != nil {
		for mode, n := range c.g.InitialTokens() {
			ch <- prometheus.MustNewConstMetric(initialTokens, prometheus.GaugeValue, float64(n), mode)
		}
	}
}

// sourceCollector reads the sources' states when scraped, so the numbers
// are never stale.
type sourceCollector struct{ sources func() []Source }

var _ prometheus.Collector = (*sourceCollector)(nil)

func (c *sourceCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- sourceUp
	ch <- sourceTools
	ch <- sourceIdleStops
	ch <- sourceRestarts
	ch <- sourceHeld
}

func (c *sourceCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.sources() {
		up := 0.0
		if s.State == "ready" {
			up = 1
		}
		ch <- prometheus.MustNewConstMetric(sourceUp, prometheus.GaugeValue, up, s.Name, s.Kind, s.State)
		ch <- prometheus.MustNewConstMetric(sourceTools, prometheus.GaugeValue, float64(s.Tools), s.Name, s.Kind)
		if s.Kind == "mcp" { // only MCP servers have a process to stop
			ch <- prometheus.MustNewConstMetric(sourceIdleStops, prometheus.CounterValue, float64(s.IdleStops), s.Name, s.Kind)
			ch <- prometheus.MustNewConstMetric(sourceRestarts, prometheus.CounterValue, float64(s.Restarts), s.Name, s.Kind)
			ch <- prometheus.MustNewConstMetric(sourceHeld, prometheus.GaugeValue, float64(s.Held), s.Name)
		}
	}
}
