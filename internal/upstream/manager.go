package upstream

import (
	"context"
	"iter"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/redact"
)

// Options configure a Manager. The zero value is usable.
type Options struct {
	// CacheDir holds the tool cache, one file per server. Empty means
	// os.UserCacheDir()/toolfold/catalog.
	CacheDir string
	// DisableCache keeps tool lists in memory only (no file is read or written).
	DisableCache bool
	// Logger receives lifecycle events (starts, exits, restarts). Never env
	// values or headers. Nil discards.
	Logger *slog.Logger
	// MaxParallelStarts bounds how many servers start at the same time
	// (spawning twenty node processes at once helps none of them). Default 4.
	MaxParallelStarts int
	// OnToolsChanged is called, on a goroutine of its own, after a server's
	// known tool list changed: first discovered, refreshed after a start, or
	// re-read after the server sent notifications/tools/list_changed.
	OnToolsChanged func(server string)
	// OnLog receives the servers' notifications/message (MCP logging).
	OnLog func(server string, msg *mcp.LoggingMessageParams)
	// OnResourceUpdated receives notifications/resources/updated for the
	// resources a client subscribed to through Subscribe.
	OnResourceUpdated func(server string, params *mcp.ResourceUpdatedNotificationParams)
	// OnPromptsChanged and OnResourcesChanged are called, on a goroutine of
	// their own, when a server sends notifications/prompts/list_changed or
	// notifications/resources/list_changed (the latter covers resource
	// templates too). The Manager keeps no prompt or resource lists, so
	// nothing is re-read here: the next listing asks the server itself.
	OnPromptsChanged, OnResourcesChanged func(server string)
	// ClientName and ClientVersion are the clientInfo sent to upstreams.
	// Default "toolfold" and "dev".
	ClientName, ClientVersion string
	// Forward says which server→client requests are advertised and forwarded.
	Forward Forwarding
	// RetryFailedStarts makes the Manager try again, in the background,
	// to start a server whose start failed while its tool list is not
	// known (no cache): nothing else would ever need it, since nobody
	// knows its tools. The attempts are spaced 1s, 2s, 4s … up to 5
	// minutes, each shortened by a random part of up to half (so servers
	// that failed together do not retry together), until one succeeds.
	RetryFailedStarts bool
	// OnStartFailed is called, on a goroutine of its own, after each
	// failed start, the background retries' included; Status then says
	// why and when the next attempt is.
	OnStartFailed func(server string, err error)
	// MaxDescriptionBytes bounds a tool's description; a longer one is
	// cut, with a warning. Default DefaultMaxDescriptionBytes.
	MaxDescriptionBytes int

	// dial replaces how connections are made (tests: in-memory servers).
	dial dialer
	// ProtocolVersion is the protocol offered to upstreams; empty offers the
	// SDK's newest. Offering 2025-11-25 keeps servers written for sessions
	// able to send sampling and elicitation requests mid-call, which many
	// refuse to do on 2026-07-28 (where they must return input requests).
	ProtocolVersion string
}

// DefaultMaxDescriptionBytes bounds a tool's description: far above
// what any real tool needs (the longest seen are a few KiB), low enough
// that one server cannot fill a client's context with one tool.
const DefaultMaxDescriptionBytes = 16 << 10

// Supervision parameters. Variables of the Manager (not constants) so tests can
// shorten them.
type supervision struct {
	// backoffBase is the delay before the first restart after a crash or a
	// failed start; it doubles with each consecutive failure up to backoffMax.
	backoffBase, backoffMax time.Duration
	// healthyAfter is how long a connection must live for its crash to count
	// as the first failure again (the backoff is reset).
	healthyAfter time.Duration
	// maxBackoffWait is the longest a caller waits for a backoff to expire
	// before getting the last error instead.
	maxBackoffWait time.Duration
	// retryBase and retryMax space the background retries of
	// Options.RetryFailedStarts: retryBase doubling up to retryMax.
	retryBase, retryMax time.Duration
}

var defaultSupervision = supervision{
	backoffBase:    250 * time.Millisecond,
	backoffMax:     30 * time.Second,
	healthyAfter:   time.Minute,
	maxBackoffWait: 2 * time.Second,
	retryBase:      time.Second,
	retryMax:       5 * time.Minute,
}

// Manager runs a fixed set of upstream MCP servers as their client. All methods
// are safe for concurrent use.
type Manager struct {
	opts  Options
	log   *slog.Logger
	cache diskCache
	// setMu guards servers, names and removed, which Reconfigure changes
	// while the Manager serves.
	setMu   sync.RWMutex
	servers map[string]*server
	names   []string // sorted, for stable Status and Discover order
	// removed names the servers a Reconfigure took away, so that a call
	// to one says so rather than that no such server exists.
	removed map[string]bool
	sup     supervision
	dial    dialer
	clock   clock
	// jitter returns a number in [0, 1) that shortens each background
	// retry's delay (tests fix it).
	jitter func() float64
	// idleChecked, if set, learns the outcome of every idle check once it
	// is over (tests wait on it instead of sleeping).
	idleChecked func(server string, stopped bool)
	// connectionEnding, if set, is called by a connection's watcher once
	// the connection is over, before the server learns of it (tests hold
	// it to make that news late).
	connectionEnding func(server string)
	// refreshQueued and refreshEnded, if set, learn that a re-read of a
	// server's tool list was queued behind the one in flight, and that the
	// re-reads in flight are over (tests wait on them instead of sleeping).
	refreshQueued, refreshEnded func(server string)
	// transitionRefused, if set, learns of each lifecycle transition the
	// table refused (tests fail on it: every one is a bug).
	transitionRefused func(server string, from, to phase, event string)

	startSlots chan struct{} // semaphore: MaxParallelStarts

	// life is cancelled by Close; starts in progress watch it.
	life     context.Context
	shutdown context.CancelFunc
	bg       sync.WaitGroup // watchers, refreshes, callbacks
	closeMu  sync.Mutex
	closed   bool
}

// New returns a Manager over servers (the config's mcpServers, keyed by name).
// Nothing starts: servers start on first need. Disabled servers are known (they
// appear in Status) but never started.
func New(servers map[string]config.ServerConfig, opts *Options) *Manager {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.CacheDir == "" && !o.DisableCache {
		o.CacheDir = defaultCacheDir()
	}
	if o.DisableCache {
		o.CacheDir = ""
	}
	if o.MaxDescriptionBytes <= 0 {
		o.MaxDescriptionBytes = DefaultMaxDescriptionBytes
	}
	if o.MaxParallelStarts <= 0 {
		o.MaxParallelStarts = 4
	}
	if o.ClientName == "" {
		o.ClientName = "toolfold"
	}
	if o.ClientVersion == "" {
		o.ClientVersion = "dev"
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// Nothing logged about a server may hold a secret of any server's
	// config, nor a URL's userinfo or query.
	secrets := &redact.Secrets{}
	for _, cfg := range servers {
		secrets.Merge(secretsOf(cfg))
	}
	log = slog.New(redact.Handler(log.Handler(), secrets))
	life, shutdown := context.WithCancel(context.Background())
	m := &Manager{
		opts:       o,
		log:        log,
		cache:      diskCache{dir: o.CacheDir},
		servers:    make(map[string]*server, len(servers)),
		sup:        defaultSupervision,
		dial:       o.dial,
		clock:      realClock{},
		jitter:     rand.Float64,
		startSlots: make(chan struct{}, o.MaxParallelStarts),
		life:       life,
		shutdown:   shutdown,
	}
	if m.dial == nil {
		m.dial = defaultDialer
	}
	for name, cfg := range servers {
		if cfg.Name == "" {
			cfg.Name = name
		}
		m.servers[name] = newServer(m, name, cfg)
		m.names = append(m.names, name)
	}
	sort.Strings(m.names)
	return m
}

// Names returns the configured servers' names, sorted, disabled ones included.
func (m *Manager) Names() []string {
	m.setMu.RLock()
	defer m.setMu.RUnlock()
	return slices.Clone(m.names)
}

// serverList is the servers in name order, as they are now.
func (m *Manager) serverList() []*server {
	m.setMu.RLock()
	defer m.setMu.RUnlock()
	out := make([]*server, len(m.names))
	for i, name := range m.names {
		out[i] = m.servers[name]
	}
	return out
}

func (m *Manager) lookup(name string) (*server, error) {
	m.setMu.RLock()
	s, ok := m.servers[name]
	removed := m.removed[name]
	m.setMu.RUnlock()
	if !ok && removed {
		return nil, removedError(name)
	}
	if !ok {
		return nil, newError(ErrUnknownServer, nil, "there is no upstream server named %q in the config", name)
	}
	if s.cfg.Disabled {
		return nil, newError(ErrDisabled, nil, "upstream %q is disabled in the config (\"disabled\": true)", name)
	}
	return s, nil
}

// Tools returns a server's tools after include/exclude, by their own names. It
// answers from memory or the disk cache when it can; only a server with no
// known list is started (and its list cached). The tools are shared: treat them
// as read-only.
func (m *Manager) Tools(ctx context.Context, name string) ([]*mcp.Tool, error) {
	s, err := m.lookup(name)
	if err != nil {
		return nil, err
	}
	if tools, ok := s.knownTools(); ok {
		return s.filter(tools), nil
	}
	c, err := s.connect(ctx)
	if err != nil {
		return nil, err
	}
	s.release(c)
	tools, _ := s.knownTools()
	return s.filter(tools), nil
}

// CachedTools returns a server's tools (after include/exclude) from memory or
// the disk cache, never starting anything. ok is false when no list is known.
func (m *Manager) CachedTools(name string) (tools []*mcp.Tool, ok bool) {
	s, err := m.lookup(name)
	if err != nil {
		return nil, false
	}
	tools, ok = s.knownTools()
	if !ok {
		return nil, false
	}
	return s.filter(tools), true
}

// OwnToolNames returns the names of every tool the server offers, before its
// include and exclude globs, from the live connection or the cache; ok is
// false while they are unknown. It is for telling a user which globs match
// nothing.
func (m *Manager) OwnToolNames(name string) (names []string, ok bool) {
	s, err := m.lookup(name)
	if err != nil {
		return nil, false
	}
	tools, ok := s.knownTools()
	if !ok {
		return nil, false
	}
	for _, t := range tools {
		names = append(names, t.Name)
	}
	return names, true
}

// CachedGroups returns the groups a server declared through the groups
// extension (after include/exclude on their tool names), from memory or the
// disk cache, never starting anything. groups is nil for a server that does
// not serve the extension; ok is false when nothing is known yet. The tools
// of the groups are in the server's tool list (Tools, CachedTools), the
// scoped ones it leaves out of tools/list included.
func (m *Manager) CachedGroups(name string) (groups []*Group, ok bool) {
	s, err := m.lookup(name)
	if err != nil {
		return nil, false
	}
	s.loadCache()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.known {
		return nil, false
	}
	return s.filterGroups(s.groups), true
}

// ServerInfo returns what the server said at initialize (capabilities,
// instructions, server info, protocol version), from the live connection or the
// cache, never starting anything.
func (m *Manager) ServerInfo(name string) (*mcp.InitializeResult, bool) {
	s, err := m.lookup(name)
	if err != nil {
		return nil, false
	}
	return s.initResult()
}

// Discover makes every enabled server's tool list known and yields each
// server's outcome as soon as it is settled, fastest first, so a slow server
// does not hold back the others. A lazy server with a cached list is settled at
// once without starting; the others (non-lazy servers, and lazy ones never seen
// before) are started, at most MaxParallelStarts at a time. Stopping the
// iteration early leaves the remaining starts running.
func (m *Manager) Discover(ctx context.Context) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		type outcome struct {
			name string
			err  error
		}
		var enabled []*server
		for _, s := range m.serverList() {
			if !s.cfg.Disabled {
				enabled = append(enabled, s)
			}
		}
		loadCaches(enabled)
		var pending []*server
		for _, s := range enabled {
			if _, ok := s.knownTools(); ok && s.cfg.Lazy {
				if !yield(s.name, nil) {
					return
				}
				continue
			}
			pending = append(pending, s)
		}
		results := make(chan outcome, len(pending)) // buffered: nobody blocks if we stop early
		for _, s := range pending {
			go func() {
				c, err := s.connect(ctx)
				if err == nil {
					s.release(c)
				}
				results <- outcome{s.name, err}
			}()
		}
		for range pending {
			select {
			case r := <-results:
				if !yield(r.name, r.err) {
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}
}

// DiscoverAll runs Discover to the end and returns each server's error (nil
// for success). Each server's list is available (CachedTools, OnToolsChanged)
// as soon as it is known, before DiscoverAll returns.
func (m *Manager) DiscoverAll(ctx context.Context) map[string]error {
	out := map[string]error{}
	for name, err := range m.Discover(ctx) {
		out[name] = err
	}
	for _, s := range m.serverList() {
		if _, ok := out[s.name]; !ok && !s.cfg.Disabled {
			out[s.name] = ctx.Err()
		}
	}
	return out
}

// Close stops every server and waits for them to exit. Calls in flight fail
// with ErrClosed. Close is idempotent.
func (m *Manager) Close() error {
	m.closeMu.Lock()
	if m.closed {
		m.closeMu.Unlock()
		return nil
	}
	m.closed = true
	m.closeMu.Unlock()
	m.shutdown()
	var wg sync.WaitGroup
	for _, s := range m.serverList() {
		wg.Go(s.close)
	}
	wg.Wait()
	m.bg.Wait()
	return nil
}

func (m *Manager) isClosed() bool {
	m.closeMu.Lock()
	defer m.closeMu.Unlock()
	return m.closed
}

// goBackground runs f on a goroutine Close waits for, unless closing has begun
// (then it reports false and f does not run).
func (m *Manager) goBackground(f func()) bool {
	m.closeMu.Lock()
	defer m.closeMu.Unlock()
	if m.closed {
		return false
	}
	m.bg.Go(f)
	return true
}

// State is where a server is in its life.
type State string

// States. A server is idle until first needed; starting while it is being
// started for the first time; ready while connected; failed when its last start
// failed (it is tried again on the next need, after a backoff); restarting
// after it exited or lost its connection, until the next start succeeds or fails.
const (
	StateIdle       State = "idle"
	StateStarting   State = "starting"
	StateReady      State = "ready"
	StateFailed     State = "failed"
	StateRestarting State = "restarting"
)

// Status is a server's health, for /healthz and `toolfold tools`.
type Status struct {
	Name  string `json:"name"`
	State State  `json:"state"`
	// Transport is stdio, http or sse.
	Transport string `json:"transport"`
	// Disabled servers are never started.
	Disabled bool `json:"disabled,omitempty"`
	// Error says why the server failed or exited, for a person.
	Error string `json:"error,omitempty"`
	// StderrTail is the end of the stdio server's stderr (the running
	// process's, or the last one's).
	StderrTail string `json:"stderrTail,omitempty"`
	// Restarts counts start attempts after the first, except the first
	// start after an idle stop, which is a first start again.
	Restarts int `json:"restarts"`
	// IdleStops counts the times the server was stopped for idleness.
	IdleStops int `json:"idleStops,omitempty"`
	// Since is when the server entered State.
	Since time.Time `json:"since"`
	// FailedStarts counts the start attempts that failed in a row; zero
	// once one succeeds.
	FailedStarts int `json:"failedStarts,omitempty"`
	// NextStart is when toolfold tries again by itself to start a server
	// whose start failed (Options.RetryFailedStarts), past while that try
	// is under way; zero when it does not (the next need starts it).
	NextStart time.Time `json:"nextStart,omitzero"`
	// Tools is the number of known tools after include/exclude; ToolsCached
	// says the list came from the disk cache and the server has not been
	// started since.
	Tools       int  `json:"tools"`
	ToolsCached bool `json:"toolsCached,omitempty"`
	// Sandbox says which rules a stdio server runs under ("none" for
	// none; see config.ServerConfig.SandboxSummary).
	Sandbox string `json:"sandbox,omitempty"`
}

// Status returns every server's status, sorted by name.
func (m *Manager) Status() []Status {
	list := m.serverList()
	out := make([]Status, 0, len(list))
	for _, s := range list {
		st := s.status()
		st.Sandbox = s.cfg.SandboxSummary()
		out = append(out, st)
	}
	return out
}

// errorOf returns err's message, or "" for nil.
func errorOf(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
