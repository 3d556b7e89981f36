package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/redact"
	"github.com/toolfold/toolfold/internal/relay"
)

// server is one configured upstream and its supervision state.
type server struct {
	m       *Manager
	name    string
	cfg     config.ServerConfig
	key     string // cache key
	timeout time.Duration
	// startTimeout bounds a start (the config's startTimeout): independent
	// of the call timeout, since a start may have to fetch a package first
	// (npx -y on a cold cache).
	startTimeout time.Duration
	// idleTimeout stops the started server after this long without a
	// request; zero means never (see idle.go).
	idleTimeout time.Duration
	log         *slog.Logger
	// secrets are the config's secrets of this server, masked in every
	// error about it: a server may quote them back (in a JSON-RPC error,
	// an initialize failure, its stderr).
	secrets *redact.Secrets

	cacheOnce sync.Once

	// after, when set, is closed once the server this one replaced (same
	// name, config changed by a reload) has stopped: two processes of a
	// server that keeps a file must not overlap. removed says a reload
	// took the server away: nothing starts it again.
	after   <-chan struct{}
	removed atomic.Bool
	// retired is closed once a removed server has stopped (retire).
	retired chan struct{}

	mu sync.Mutex
	// phase is where the server is in its life; it changes only through
	// transitionLocked (states.go), which also sets since.
	phase   phase
	since   time.Time
	lastErr error // why the server is failed or restarting
	// startGen numbers the starts (each entry into starting or
	// restarting); a connection and the tool lists read on it carry the
	// number of the start that made it.
	startGen  uint64
	restarts  int // start attempts that were not first starts
	idleStops int // times the server was stopped for idleness
	conn      *connection
	starting  chan struct{} // non-nil while a start runs; closed when it ends
	failures  int           // consecutive failures (crashes and failed starts)
	retryAt   time.Time     // no new start before this
	// failedStarts counts the failed starts since the last success;
	// retryTimer and nextStart are the background retry armed after the
	// last one (Options.RetryFailedStarts), nil and zero when none is.
	failedStarts int
	retryTimer   stopper
	nextStart    time.Time
	lastTail     *tailBuffer // stderr of the current or last process
	init         *mcp.InitializeResult
	tools        []*mcp.Tool // the server's own list, before include/exclude
	groups       []*Group    // what it declared through the groups extension, nil if nothing
	known        bool        // tools holds a list (possibly empty)
	cached       bool        // tools came from disk, not from this run
	// subscriptions counts, by resource URI, the subscriptions clients hold
	// on the server; while any is held it is not stopped for idleness.
	subscriptions map[string]int
	// drained, when set, is closed when the connection's last lease is
	// given back: a reload that removed the server waits on it (retire).
	drained chan struct{}
	// refreshing and refreshAgain coalesce tools/list_changed storms into at
	// most one re-read in flight and one queued (on the newest connection
	// that asked).
	refreshing   bool
	refreshAgain *refreshAsk
	// listGen numbers the reads of the tool list in the order they
	// began, and listWritten is the number of the one recorded last: a
	// read that began before it (a start's list, overtaken by the
	// re-read of a list_changed that came during the start) is older
	// and is not recorded over it.
	listGen, listWritten uint64
	// groupsOff says the server broke its connection when asked for its
	// groups: the extension is no longer declared to it.
	groupsOff bool
	// warnedTools and warnedDescriptions say the warnings of bound were
	// logged: once per server, not at every re-read.
	warnedTools, warnedDescriptions atomic.Bool
}

func newServer(m *Manager, name string, cfg config.ServerConfig) *server {
	timeout := cfg.Timeout.Std()
	if timeout <= 0 {
		timeout = config.DefaultServerTimeout
	}
	s := &server{
		m:       m,
		name:    name,
		cfg:     cfg,
		key:     cacheKey(cfg),
		timeout: timeout,
		log:     m.log.With("upstream", name),
		phase:   phaseNew,
		since:   m.clock.Now(),
	}
	s.secrets = secretsOf(cfg)
	s.idleTimeout = idleTimeoutOf(s)
	s.startTimeout = cfg.EffectiveStartTimeout()
	return s
}

// connection is one session with the server: one process for stdio, one MCP
// session for HTTP and SSE. A restart makes a new connection.
type connection struct {
	s         *server
	gen       uint64 // the start that made it (server.startGen)
	session   *mcp.ClientSession
	cmd       *exec.Cmd        // nil for remote servers
	http      *headerTransport // nil for stdio servers
	stderr    *tailBuffer
	startedAt time.Time
	calls     calls
	cancel    context.CancelFunc // ends the context the transport was connected with
	// raw is the side door of the fast path (raw.go); nil but for stdio
	// servers started by stdioTransport.
	raw *rawConn
	// intake watches the readers for the event "the server has nothing
	// more in hand" (relay.Intake): rawLines on stdio, each event
	// stream's body on HTTP (streamIntake).
	intake *relay.Intake

	stopping atomic.Bool // toolfold closed it on purpose
	// sessionLost says a remote server ended it by forgetting the session
	// (404 session not found); set before ended is closed.
	sessionLost bool
	// live is session, published for the goroutines that observe the wire
	// (set once the handshake is over).
	live atomic.Pointer[mcp.ClientSession]

	// Guarded by s.mu (see idle.go).
	active    int       // requests holding a lease
	lastUsed  time.Time // when the last lease was given back (the Manager's clock)
	idleTimer stopper   // nil until first armed
	retiring  bool      // being stopped for idleness: hand it to no one

	ended chan struct{} // closed once the connection is over and the process reaped
	// endVerb and endDetail say how it ended ("exited", "exit status 1"); set
	// before ended is closed.
	endVerb, endDetail string
}

// stderrSuffix is ": <the stderr lines that explain why>" or "".
func (c *connection) stderrSuffix() string {
	if c.stderr == nil {
		return ""
	}
	if l := c.stderr.Explanation(); l != "" {
		return ": " + l
	}
	return ""
}

func (c *connection) isEnded() bool {
	select {
	case <-c.ended:
		return true
	default:
		return false
	}
}

// loadCache reads the disk cache once, unless this run already knows better.
func (s *server) loadCache() {
	s.cacheOnce.Do(func() {
		e, err := s.m.cache.load(s.name, s.key)
		if err != nil {
			s.log.Warn("ignoring the tool cache", "error", err)
			return
		}
		if e == nil {
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if !s.known {
			tools, groups := s.admit(e.Tools, e.Groups)
			s.tools, s.groups, s.init, s.known, s.cached = s.bound(tools), groups, e.Init, true, true
		}
	})
}

func (s *server) knownTools() ([]*mcp.Tool, bool) {
	s.loadCache()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tools, s.known
}

func (s *server) initResult() (*mcp.InitializeResult, bool) {
	s.loadCache()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.init, s.init != nil
}

// allowed applies the config's include, then exclude, to one of the server's
// own tool names.
func (s *server) allowed(tool string) bool {
	if len(s.cfg.Include) > 0 {
		in := false
		for _, g := range s.cfg.Include {
			if config.MatchGlob(g, tool) {
				in = true
				break
			}
		}
		if !in {
			return false
		}
	}
	for _, g := range s.cfg.Exclude {
		if config.MatchGlob(g, tool) {
			return false
		}
	}
	return true
}

func (s *server) filter(tools []*mcp.Tool) []*mcp.Tool {
	out := make([]*mcp.Tool, 0, len(tools))
	for _, t := range tools {
		if s.allowed(t.Name) {
			out = append(out, t)
		}
	}
	return out
}

// backoff is the wait before the next start after n consecutive failures.
func (s *server) backoff(n int) time.Duration {
	d := s.m.sup.backoffBase
	for i := 1; i < n && d < s.m.sup.backoffMax; i++ {
		d *= 2
	}
	return min(d, s.m.sup.backoffMax)
}

// retryDelay is the wait before the background retry that follows the
// n-th failed start in a row: retryBase doubling up to retryMax, less a
// random part of up to half of it.
func (s *server) retryDelay(n int) time.Duration {
	d := s.m.sup.retryBase
	for i := 1; i < n && d < s.m.sup.retryMax; i++ {
		d *= 2
	}
	d = min(d, s.m.sup.retryMax)
	return d - time.Duration(float64(d/2)*s.m.jitter())
}

// armRetryLocked sets the background retry off after delay; s.mu is held.
func (s *server) armRetryLocked(delay time.Duration) {
	if s.retryTimer != nil {
		s.retryTimer.Stop()
	}
	s.nextStart = s.m.clock.Now().Add(delay)
	s.retryTimer = s.m.clock.AfterFunc(delay, func() {
		s.mu.Lock()
		// nextStart stays until the try ends (a failure sets the next,
		// a success clears it): meanwhile the try is under way.
		s.retryTimer = nil
		// Its time has come: the caller's backoff gate must not hold it
		// back (the real clock and the Manager's may differ in tests).
		s.retryAt = time.Time{}
		s.mu.Unlock()
		s.m.goBackground(func() {
			if c, err := s.connect(s.m.life); err == nil {
				s.release(c)
			}
		})
	})
}

// connect returns the live connection, starting the server if needed, with a
// lease on it that the caller gives back with release once its request is
// answered (a leased connection is not stopped for idleness). Callers
// that arrive while a start runs wait for it (or for their ctx); the start
// itself runs on the Manager's life, so one impatient caller does not abort it
// for the others.
func (s *server) connect(ctx context.Context) (*connection, error) {
	if a := s.after; a != nil {
		if err := s.await(ctx, a, "is restarting after a config change"); err != nil {
			return nil, err
		}
	}
	waitedForStart := false
	for {
		if s.m.isClosed() {
			return nil, s.errorf(ErrClosed, nil, "upstream %q is not available: toolfold is shutting down", s.name)
		}
		if s.removed.Load() {
			return nil, removedError(s.name)
		}
		s.mu.Lock()
		next := s.connectStepLocked(waitedForStart)
		s.mu.Unlock()
		waitedForStart = false
		switch {
		case next.lease != nil:
			return next.lease, nil
		case next.err != nil:
			return nil, next.err
		case next.start != nil:
			s.runStart(next.start)
		case next.backoff > 0:
			if err := s.awaitBackoff(ctx, next.backoff); err != nil {
				return nil, err
			}
		default:
			if err := s.await(ctx, next.wait, next.waitFor); err != nil {
				return nil, err
			}
			waitedForStart = next.isStart
		}
	}
}

// connectStep is what connect does next, as connectStepLocked decides it
// from where the server is: exactly one of its fields says what.
type connectStep struct {
	lease   *connection     // leased to the caller: done
	err     error           // give up with it
	start   chan struct{}   // a start was begun (runStart runs it)
	backoff time.Duration   // wait out the backoff, then look again
	wait    <-chan struct{} // wait for it to close, then look again
	waitFor string          // what the wait is for, for a cancelled caller
	isStart bool            // wait is a start's
}

// connectStepLocked decides connect's next step. waitedForStart says the
// caller has just waited for a start: if it failed, the caller gets its
// error rather than waiting for the next. s.mu is held.
func (s *server) connectStepLocked(waitedForStart bool) connectStep {
	if s.phase == phaseClosing || s.phase == phaseClosed {
		// Closed between connect's checks and the lock: nothing starts
		// it again.
		if s.removed.Load() {
			return connectStep{err: removedError(s.name)}
		}
		return connectStep{err: s.errorf(ErrClosed, nil, "upstream %q is not available: toolfold is shutting down", s.name)}
	}
	if c := s.conn; c != nil && !c.isEnded() {
		if c.retiring {
			// Being stopped for idleness: wait until it is gone, then
			// start a new one (two processes of a server that keeps a
			// file must not overlap).
			return connectStep{wait: c.ended, waitFor: "is being stopped and started again"}
		}
		c.active++
		return connectStep{lease: c}
	}
	if waitedForStart && s.lastErr != nil {
		return connectStep{err: s.lastErr}
	}
	if ch := s.starting; ch != nil {
		return connectStep{wait: ch, waitFor: "is still starting", isStart: true}
	}
	if wait := s.retryAt.Sub(s.m.clock.Now()); wait > 0 {
		if wait > s.m.sup.maxBackoffWait {
			last := s.lastErr
			return connectStep{err: s.errorf(ErrStartFailed, last, "%v; toolfold will try to start it again in %s", last, humanDuration(wait.Round(time.Second)))}
		}
		return connectStep{backoff: wait}
	}
	// A server never started, or stopped for idleness, makes a first
	// start; one that failed or crashed restarts.
	to := phaseRestarting
	if s.phase == phaseNew || s.phase == phaseIdleStopped {
		to = phaseStarting
	}
	if !s.transitionLocked(to, "needed") {
		return connectStep{err: s.errorf(ErrStartFailed, nil, "upstream %q could not be started: toolfold found it in an unexpected state; this is a bug in toolfold, please report it", s.name)}
	}
	s.starting = make(chan struct{})
	return connectStep{start: s.starting}
}

// runStart runs the start connectStepLocked began, on a goroutine Close
// waits for; a Manager that began to close meanwhile runs none, and the
// server is closing.
func (s *server) runStart(done chan struct{}) {
	if s.m.goBackground(func() { s.start(done) }) {
		return
	}
	s.mu.Lock()
	s.starting = nil
	s.transitionLocked(phaseClosing, "shutdown before the start ran")
	s.mu.Unlock()
	close(done)
}

// await waits for ch to close, or fails with the caller's ctx saying
// what the server was doing (for).
func (s *server) await(ctx context.Context, ch <-chan struct{}, what string) error {
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return s.errorf(nil, ctx.Err(), "upstream %q %s: %v", s.name, what, ctx.Err())
	}
}

// awaitBackoff waits out the backoff before the next start, on the
// Manager's clock, as the backoff was set: one clock for the supervisor's
// times and its timers.
func (s *server) awaitBackoff(ctx context.Context, wait time.Duration) error {
	due := make(chan struct{})
	t := s.m.clock.AfterFunc(wait, func() { close(due) })
	if err := s.await(ctx, due, "is waiting to be restarted"); err != nil {
		t.Stop()
		return err
	}
	return nil
}

// start makes one attempt to start the server and learn its tools. It ends by
// closing done, with s.conn set or s.lastErr saying why not.
func (s *server) start(done chan struct{}) {
	defer close(done)
	s.loadCache() // whether a list is known decides on a background retry
	// finish ends the start: with err, or with c ready and list recorded
	// in the same step, so no caller sees the server ready before its
	// tools are known.
	finish := func(c *connection, list *toolList, err error) {
		s.mu.Lock()
		s.starting = nil
		if err != nil {
			s.failures++
			s.failedStarts++
			delay := s.backoff(s.failures)
			if s.m.opts.RetryFailedStarts && !s.known && !s.m.isClosed() {
				delay = s.retryDelay(s.failedStarts)
				s.armRetryLocked(delay)
			}
			s.retryAt = s.m.clock.Now().Add(delay)
			s.lastErr = err
			s.transitionLocked(phaseFailed, "start failed")
			s.mu.Unlock()
			if s.m.isClosed() {
				// Cut short by the shutdown (a stdio client that left while
				// this started): an ordinary end, not a failure.
				s.log.Debug("upstream start cut short: toolfold is shutting down", "error", err)
				return
			}
			s.log.Warn("upstream failed to start", "error", err, "attempt", s.failedStarts, "next_attempt_in", delay)
			if on := s.m.opts.OnStartFailed; on != nil {
				s.m.goBackground(func() { on(s.name, err) })
			}
			return
		}
		entry, changed, ok := s.readyLocked(c, list)
		if ok {
			c.lastUsed = s.m.clock.Now()
			s.armIdleLocked(c) // in case every caller waiting for the start gave up
		}
		s.mu.Unlock()
		if !ok {
			c.stop()
		}
		s.recorded(entry, changed)
	}
	select {
	case s.m.startSlots <- struct{}{}:
		defer func() { <-s.m.startSlots }()
	case <-s.m.life.Done():
		finish(nil, nil, s.errorf(ErrClosed, nil, "upstream %q was not started: toolfold is shutting down", s.name))
		return
	}
	// The deadline runs on the Manager's clock, so a test can reach it
	// without waiting; its cause tells startError the timeout was hit.
	ctx, cancel := context.WithCancelCause(s.m.life)
	deadline := s.m.clock.AfterFunc(s.startTimeout, func() { cancel(errStartTimeout) })
	defer func() {
		deadline.Stop()
		cancel(nil)
	}()
	began := s.m.clock.Now()
	c, err := s.dialAndInitialize(ctx)
	if err != nil {
		finish(nil, nil, err)
		return
	}
	gen := s.beginList()
	tools, groups, err := s.readTools(ctx, c.session)
	if errors.Is(err, errGroupsDroppedConnection) {
		// Read as a server without the extension from now on: not declared,
		// it lists every tool.
		s.log.Warn("upstream dropped its connection when asked for its groups; it is read without the groups extension from now on")
		c.stop()
		s.mu.Lock()
		s.groupsOff = true
		s.mu.Unlock()
		if c, err = s.dialAndInitialize(ctx); err != nil {
			finish(nil, nil, err)
			return
		}
		gen = s.beginList()
		tools, groups, err = s.readTools(ctx, c.session)
	}
	if err != nil {
		err = s.startError(ctx, c, fmt.Errorf("listing its tools: %w", err))
		c.stop()
		finish(nil, nil, err)
		return
	}
	if s.m.isClosed() {
		c.stop()
		finish(nil, nil, s.errorf(ErrClosed, nil, "upstream %q was stopped: toolfold is shutting down", s.name))
		return
	}
	s.log.Info("upstream started", "transport", describeTransport(s.cfg), "tools", len(tools), "took", s.m.clock.Now().Sub(began).Round(time.Millisecond))
	finish(c, s.prepareList(c, gen, c.session.InitializeResult(), tools, groups), nil)
}

// dialAndInitialize spawns or dials the server and runs the MCP handshake.
func (s *server) dialAndInitialize(ctx context.Context) (*connection, error) {
	d, err := s.m.dial(ctx, s.name, s.cfg, s.log)
	if err != nil {
		return nil, s.errorf(ErrStartFailed, err, "upstream %q could not be started: %v", s.name, err)
	}
	transport, cmd, tail := d.transport, d.cmd, d.stderr
	c := &connection{s: s, cmd: cmd, stderr: tail, http: d.http, startedAt: s.m.clock.Now(), ended: make(chan struct{})}
	if st, ok := transport.(*stdioTransport); ok {
		st.skipped = func(line string) {
			s.log.Warn("upstream printed a line on stdout that is not JSON-RPC; skipped it", "line", line)
		}
		c.raw = &rawConn{}
		st.raw = c.raw
		c.intake = &relay.Intake{}
		st.intake = c.intake
		c.calls.intake = c.intake
		st.broken = func(line []byte) ([]byte, bool) {
			rep, answered := c.raw.brokenAnswer(line)
			if answered {
				s.log.Warn("upstream answered with a message that is not valid JSON; failed the request it answered", "line", lastLine(string(bytes.ToValidUTF8(line[:min(len(line), junkQuote)], []byte("�")))))
			}
			return rep, answered
		}
		st.maxMessage = int(s.cfg.EffectiveMaxMessageBytes())
		st.tooLarge = func(id []byte, request bool) {
			kind := "an answer"
			if request {
				kind = "a request or notification of its own"
			}
			s.log.Warn("upstream sent a message larger than its maxMessageBytes; skipped it without holding it, and failed only the request it answered",
				"maxMessageBytes", s.cfg.EffectiveMaxMessageBytes(), "message", kind, "id", string(id))
		}
	}
	s.mu.Lock()
	s.lastTail = tail
	c.gen = s.startGen
	s.mu.Unlock()
	client := mcp.NewClient(&mcp.Implementation{Name: s.m.opts.ClientName, Version: s.m.opts.ClientVersion}, s.clientOptions(c))
	s.registerGroupMethods(client, c)
	if c.http != nil {
		c.intake = &relay.Intake{}
		c.http.intake = c.intake
		c.calls.intake = c.intake
		c.http.watchGroupsChanged(func() { s.groupsChanged(c) })
	}
	client.AddReceivingMiddleware(c.intakeMiddleware, s.rootsMiddleware(c), s.elicitationMiddleware(c))
	var sessOpts *mcp.ClientSessionOptions
	if v := s.m.opts.ProtocolVersion; v != "" {
		sessOpts = &mcp.ClientSessionOptions{ProtocolVersion: v}
	}
	// The SSE transport keeps the context its Connect gets for the life of
	// the stream, so it must not be the start's (cancelled when start returns):
	// it gets one that lives as long as the connection, which the start's
	// deadline still cuts short until the handshake is done.
	connCtx, cancelConn := context.WithCancel(s.m.life)
	c.cancel = cancelConn
	stopDeadline := context.AfterFunc(ctx, cancelConn)
	session, err := client.Connect(ctx, &lifetimeTransport{Transport: transport, ctx: connCtx, progressRead: c.progressRead,
		groupsChanged: func() { s.groupsChanged(c) }}, sessOpts)
	if err != nil {
		cancelConn()
		reapFailedStart(cmd)
		return nil, s.startError(ctx, c, err)
	}
	stopDeadline()
	c.session = session
	c.live.Store(session)
	s.m.bg.Add(1)
	go func() {
		defer s.m.bg.Done()
		c.watch()
	}()
	return c, nil
}

// lifetimeTransport connects its transport with a context of its choosing
// instead of the caller's.
type lifetimeTransport struct {
	mcp.Transport
	ctx context.Context
	// progressRead, if set, is told the token of each progress notification
	// as it is read.
	progressRead func(token string)
	// groupsChanged, if set, is told of each
	// notifications/groups/list_changed, which the SDK client drops (it
	// knows no such method).
	groupsChanged func()
}

var _ mcp.Transport = (*lifetimeTransport)(nil)

func (t *lifetimeTransport) Connect(context.Context) (mcp.Connection, error) {
	conn, err := t.Transport.Connect(t.ctx)
	if err != nil || t.progressRead == nil && t.groupsChanged == nil {
		return conn, err
	}
	// The streamable client connection implements an unexported interface the
	// SDK needs (session state, protocol header, standalone stream) that a
	// wrapper would hide, so it is left alone; its progress ordering is then
	// best effort (see progressCount), and its groups list_changed is seen
	// by its HTTP round tripper instead (see headerTransport).
	if _, streamable := t.Transport.(*mcp.StreamableClientTransport); streamable {
		return conn, nil
	}
	return &progressObserver{Connection: conn, read: t.progressRead, groupsChanged: t.groupsChanged}, nil
}

// progressObserver reports each progress notification as it is read off the
// wire, before the SDK queues it for its handler, and each groups
// list_changed, which the SDK would drop.
type progressObserver struct {
	mcp.Connection
	read          func(token string)
	groupsChanged func()
}

var _ mcp.Connection = (*progressObserver)(nil)

func (o *progressObserver) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := o.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == notificationGroupsChange && o.groupsChanged != nil {
		o.groupsChanged()
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "notifications/progress" && o.read != nil {
		var p struct {
			Token any `json:"progressToken"`
		}
		if json.Unmarshal(req.Params, &p) == nil {
			if tok, ok := p.Token.(string); ok {
				o.read(tok)
			}
		}
	}
	return msg, err
}

// errStartTimeout is the cause of a start context that hit the server's
// startTimeout.
var errStartTimeout = errors.New("upstream start timeout")

// reapFailedStart makes sure a process whose handshake failed is gone and
// waited for, so its exit status and all of its stderr are known.
func reapFailedStart(cmd *exec.Cmd) {
	if cmd == nil || cmd.Process == nil {
		return
	}
	if cmd.ProcessState == nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	killProcessGroup(cmd)
}

// startError words a failed start for the person who has to fix it: the exit
// status and last stderr line of a process that died, the timeout of one that
// hung, the HTTP or network error of a remote server.
func (s *server) startError(ctx context.Context, c *connection, err error) error {
	// A server that answered the handshake with an error said why; its
	// exit afterwards (toolfold hung up) says nothing more.
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) && isTooLarge(rpcErr) {
		return s.errorf(ErrStartFailed, err, "upstream %q could not be started: it sent a message of more than %s (maxMessageBytes) while starting; raise its \"maxMessageBytes\" if that is expected", s.name, s.cfg.EffectiveMaxMessageBytes())
	}
	if errors.As(err, &rpcErr) && isInvalidAnswer(rpcErr) {
		return s.errorf(ErrStartFailed, err, "upstream %q could not be started: it answered the handshake or its listing with a message that is not valid JSON%s", s.name, c.stderrSuffix())
	}
	if errors.As(err, &rpcErr) && !sdkOwnError(rpcErr) {
		return s.errorf(ErrStartFailed, err, "upstream %q refused the MCP handshake: %s%s", s.name, rpcErr.Message, c.stderrSuffix())
	}
	// Before the exit status: a server that hung was stopped by toolfold,
	// so how its process then ended (often "exit status 0", once its stdin
	// closed) says nothing about why.
	if errors.Is(context.Cause(ctx), errStartTimeout) {
		return s.errorf(ErrStartFailed, err, "upstream %q did not start within %s (startTimeout); it was stopped%s", s.name, humanDuration(s.startTimeout), c.stderrSuffix())
	}
	if c.cmd != nil {
		if ps := c.cmd.ProcessState; ps != nil && !c.stopping.Load() {
			return s.errorf(ErrStartFailed, err, "upstream %q exited at start (%s)%s", s.name, ps.String(), c.stderrSuffix())
		}
	}
	if c.cmd != nil {
		return s.errorf(ErrStartFailed, err, "upstream %q could not be started: %v%s", s.name, err, c.stderrSuffix())
	}
	if status := c.http.lastHTTPError(); status != "" {
		hint := ""
		if strings.Contains(status, " 401 ") || strings.Contains(status, " 403 ") {
			hint = `; check the credentials in its "headers"`
		}
		return s.errorf(ErrStartFailed, err, "upstream %q at %s refused the connection: %s%s", s.name, describeTransport(s.cfg), status, hint)
	}
	return s.errorf(ErrStartFailed, err, "upstream %q at %s could not be reached: %v", s.name, describeTransport(s.cfg), err)
}

// sdkOwnError reports a JSON-RPC error the SDK makes up for a failure of
// its own side (the client is closing, the transport rejected the
// request: codes -32003 to -32005 of its jsonrpc2 package), which no
// server said.
func sdkOwnError(e *jsonrpc.Error) bool { return e.Code <= -32003 && e.Code >= -32005 }

func (s *server) clientOptions(c *connection) *mcp.ClientOptions {
	fw := s.m.opts.Forward
	caps := &mcp.ClientCapabilities{} // not nil: the SDK's default advertises roots
	s.mu.Lock()
	declareExtensions(caps, s.groupsOff)
	s.mu.Unlock()
	if fw.Roots {
		caps.RootsV2 = &mcp.RootCapabilities{}
	}
	o := &mcp.ClientOptions{
		Capabilities: caps,
		// toolfold answers multi-round-trip input requests itself, through the
		// Downstream of the call they belong to (see CallTool).
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ToolListChangedHandler: func(_ context.Context, req *mcp.ToolListChangedRequest) {
			// req.Session, not c.session: the notification may arrive during
			// the handshake, before Connect has returned the session.
			s.refreshTools(c, req.Session)
		},
		ProgressNotificationHandler: func(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
			c.relayProgress(ctx, req.Params)
		},
	}
	if on := s.m.opts.OnLog; on != nil {
		o.LoggingMessageHandler = func(_ context.Context, req *mcp.LoggingMessageRequest) {
			on(s.name, req.Params)
		}
	}
	if on := s.m.opts.OnResourceUpdated; on != nil {
		o.ResourceUpdatedHandler = func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			on(s.name, req.Params)
		}
	}
	// Off the reading goroutine, like OnToolsChanged: whoever hears of the
	// change may well list the prompts again on this very connection.
	if on := s.m.opts.OnPromptsChanged; on != nil {
		o.PromptListChangedHandler = func(context.Context, *mcp.PromptListChangedRequest) {
			s.m.goBackground(func() { on(s.name) })
		}
	}
	// Set even with nobody to tell: on 2026-07-28 the SDK subscribes to
	// the notification only for a handler, and a server's skills, which
	// are its groups, come and go with its resources (registerGroupMethods).
	onResources := s.m.opts.OnResourcesChanged
	o.ResourceListChangedHandler = func(context.Context, *mcp.ResourceListChangedRequest) {
		if onResources != nil {
			s.m.goBackground(func() { onResources(s.name) })
		}
	}
	if fw.Sampling {
		o.CreateMessageHandler = func(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			d, callCtx, err := c.calls.attribute(s.name, "sampling/createMessage", fw.Fallback)
			if err != nil {
				return nil, err
			}
			ctx, done := handOver(ctx, callCtx, d)
			defer done()
			return d.CreateMessage(ctx, req.Params)
		}
	}
	if fw.Elicitation {
		o.ElicitationHandler = func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			d, callCtx, err := c.calls.attribute(s.name, "elicitation/create", fw.Fallback)
			if err != nil {
				return nil, err
			}
			ctx, done := handOver(ctx, callCtx, d)
			defer done()
			return d.Elicit(ctx, req.Params)
		}
	}
	return o
}

// rootsMiddleware answers roots/list through the Downstream (the SDK client
// would answer from its own, empty, root set).
//
// Without Forward.Roots the roots capability is not advertised, so a server
// that adapts to its client's roots at start (the filesystem server replaces
// its directories with them) is left alone, and a request outside any call
// is refused. One that arrives during a call is the upstream asking anyway,
// for that call (servers written in the multi-round-trip style ask whatever
// their client advertised): answering a question asked changes nothing
// about what the server was told, so it goes to that call's client, which
// answers or refuses as it can.
func (s *server) rootsMiddleware(c *connection) mcp.Middleware {
	fw := s.m.opts.Forward
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "roots/list" {
				return next(ctx, method, req)
			}
			fallback := fw.Fallback
			if !fw.Roots {
				fallback = nil
			}
			d, callCtx, err := c.calls.attribute(s.name, "roots/list", fallback)
			if err != nil && !fw.Roots && c.calls.open() == 0 {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "toolfold does not forward roots/list to its clients outside a tool call (the roots capability was not advertised)"}
			}
			if err != nil {
				return nil, err
			}
			ctx, done := handOver(ctx, callCtx, d)
			defer done()
			params, _ := req.GetParams().(*mcp.ListRootsParams)
			return d.ListRoots(ctx, params)
		}
	}
}

// elicitationMiddleware forwards elicitation/create before the SDK
// client's own checks of the requested schema: the client that answers is
// the judge of what it can render, and the SDK's check refuses schemas that
// the protocol allows (titled multi-select enums whose items carry a type,
// as the conformance fixture sends them).
func (s *server) elicitationMiddleware(c *connection) mcp.Middleware {
	fw := s.m.opts.Forward
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "elicitation/create" || !fw.Elicitation {
				return next(ctx, method, req)
			}
			params, ok := req.GetParams().(*mcp.ElicitParams)
			if !ok || params == nil {
				return next(ctx, method, req)
			}
			d, callCtx, err := c.calls.attribute(s.name, "elicitation/create", fw.Fallback)
			if err != nil {
				return nil, err
			}
			ctx, done := handOver(ctx, callCtx, d)
			defer done()
			return d.Elicit(ctx, params)
		}
	}
}

// relayProgress hands an upstream progress notification to the call it
// belongs to, with the caller's own token put back.
func (c *connection) relayProgress(ctx context.Context, p *mcp.ProgressNotificationParams) {
	if p == nil {
		return
	}
	id, _ := p.ProgressToken.(string)
	call := c.calls.get(id)
	if call == nil {
		return // a late notification for a call already answered
	}
	defer call.progress.wasHandled()
	if call.onProgress == nil {
		return
	}
	relay := *p
	relay.ProgressToken = call.callerToken
	// The call's own context, not the notification handler's: it carries what
	// ties a message to the downstream request (on streamable HTTP, the
	// request whose response stream it travels on). A stateless client has
	// no other stream, so under any other context its progress is lost.
	if call.ctx != nil {
		ctx = call.ctx
	}
	call.onProgress(ctx, &relay)
}

// progressRead counts a progress notification read for a call in flight.
func (c *connection) progressRead(token string) {
	if call := c.calls.get(token); call != nil {
		call.progress.wasRead()
	}
}

// watch waits for the connection to end, reaps the process and tells the
// server, which then restarts it on the next need.
func (c *connection) watch() {
	waitErr := c.session.Wait()
	_ = c.session.Close() // reaps the process: its exit status and all of stderr are then known
	c.cancel()
	c.intake.End() // no request for input still counted can come now
	killProcessGroup(c.cmd)
	switch {
	case c.stopping.Load():
		c.endVerb, c.endDetail = "was stopped", "toolfold closed it"
	case c.cmd != nil && c.cmd.ProcessState != nil:
		c.endVerb, c.endDetail = "exited", c.cmd.ProcessState.String()
	case c.cmd != nil:
		c.endVerb, c.endDetail = "closed its connection", "its stdout was closed"
	case sessionLost(waitErr):
		c.sessionLost = true
		c.endVerb, c.endDetail = "forgot toolfold's session", "it answered 404 session not found, as after a restart"
	default:
		detail := "the session ended"
		if waitErr != nil {
			detail = waitErr.Error()
		}
		c.endVerb, c.endDetail = "lost its connection", detail
	}
	if hook := c.s.m.connectionEnding; hook != nil {
		hook(c.s.name)
	}
	// The server learns first, so that whoever wakes on ended finds the
	// restart already armed and the reason recorded.
	c.s.connectionEnded(c)
	close(c.ended)
	if c.raw != nil {
		c.raw.end(c.endError)
	}
}

// endError explains to a request in flight why it got no answer: the
// connection ended (see also requestError, which words it the same).
func (c *connection) endError(tool string) error {
	s, what := c.s, fmt.Sprintf("tools/call %q", tool)
	switch {
	case s.m.isClosed():
		return newError(ErrClosed, nil, "upstream %q was stopped during %s: toolfold is shutting down", s.name, what)
	case c.stopping.Load():
		return newError(ErrClosed, nil, "upstream %q was stopped during %s", s.name, what)
	}
	return newError(ErrExited, nil, "upstream %q %s during %s (%s)%s; it will be restarted on the next call", s.name, c.endVerb, what, c.endDetail, c.stderrSuffix())
}

// stop closes the connection on purpose and waits until it is over.
func (c *connection) stop() {
	c.stopping.Store(true)
	_ = c.session.Close()
	<-c.ended
}

// connectionEnded records a crash (anything toolfold did not ask for) and
// arms the backoff for the restart on the next need.
func (s *server) connectionEnded(c *connection) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != c {
		return // a start that failed half-way, or already replaced
	}
	s.conn = nil
	if c.idleTimer != nil {
		c.idleTimer.Stop()
	}
	switch {
	case s.phase == phaseClosing:
		return // close stopped it
	case s.m.isClosed():
		s.transitionLocked(phaseClosing, "connection ended by the shutdown")
		return
	case c.retiring && c.stopping.Load():
		// Not a crash: no backoff, and the next start is a first start. A
		// server that served long enough is healthy again, as after a crash.
		if s.m.clock.Now().Sub(c.startedAt) >= s.m.sup.healthyAfter {
			s.failures = 0
		}
		c.endDetail = "idle for " + humanDuration(s.idleTimeout)
		s.idleStops++
		s.transitionLocked(phaseIdleStopped, "idle timeout")
		s.log.Info("upstream stopped: idle", "idle_timeout", s.idleTimeout, "ran_for", s.m.clock.Now().Sub(c.startedAt).Round(time.Second))
		return
	case c.sessionLost:
		// The server is up; it only forgot the session. Not a failure:
		// the next need makes a new session at once.
		s.lastErr = s.errorf(ErrExited, nil, "upstream %q %s (%s); a new session is made on the next call", s.name, c.endVerb, c.endDetail)
		s.transitionLocked(phaseCrashed, "session lost")
		s.log.Info("upstream forgot the session", "detail", c.endDetail)
		return
	}
	if s.m.clock.Now().Sub(c.startedAt) >= s.m.sup.healthyAfter {
		s.failures = 0
	}
	s.failures++
	delay := s.backoff(s.failures)
	s.retryAt = s.m.clock.Now().Add(delay)
	s.lastErr = s.errorf(ErrExited, nil, "upstream %q %s (%s)%s; it will be restarted on the next call", s.name, c.endVerb, c.endDetail, c.stderrSuffix())
	s.transitionLocked(phaseCrashed, "connection ended unasked")
	s.log.Warn("upstream exited", "how", c.endVerb, "detail", c.endDetail, "restart_after", delay)
}

// dropLostSession lets go of a connection whose remote server forgot
// toolfold's session (a request on it was answered 404), at once: the
// caller retries on a new session, and must not meet this dead connection
// again while its watcher is still winding it down.
func (s *server) dropLostSession(c *connection) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != c || s.phase != phaseReady {
		return // already let go of, or being closed (close stops it)
	}
	s.conn = nil
	if c.idleTimer != nil {
		c.idleTimer.Stop()
	}
	// Not a failure: the server is up, and the next need makes a new
	// session at once.
	s.lastErr = s.errorf(ErrExited, nil, "upstream %q forgot toolfold's session (it answered 404 session not found, as after a restart); a new session is made on the next call", s.name)
	s.transitionLocked(phaseCrashed, "session lost")
	s.log.Info("upstream forgot the session")
}

// close stops the server for good (Manager.Close, retire).
func (s *server) close() {
	s.mu.Lock()
	if s.retryTimer != nil {
		s.retryTimer.Stop()
		s.retryTimer, s.nextStart = nil, time.Time{}
	}
	// A start that runs ends first (starts watch the Manager's life and end
	// promptly); closing is entered with none running, and from then on
	// connect starts none.
	for s.starting != nil {
		starting := s.starting
		s.mu.Unlock()
		<-starting
		s.mu.Lock()
	}
	if s.phase == phaseClosed {
		s.mu.Unlock()
		return
	}
	if s.phase != phaseClosing {
		s.transitionLocked(phaseClosing, "close")
	}
	c := s.conn
	s.mu.Unlock()
	if c != nil {
		c.stop()
	}
	s.mu.Lock()
	s.conn = nil
	if s.phase == phaseClosing { // a concurrent close may have ended it
		s.transitionLocked(phaseClosed, "stopped")
	}
	s.mu.Unlock()
}

// listTools reads every page of the server's tools; a server without the
// tools capability has none.
// At most limit+1 are read (limit <= 0: all), so a runaway list costs
// no more than the bound, and bound can tell there were more.
func listTools(ctx context.Context, cs *mcp.ClientSession, limit int) ([]*mcp.Tool, error) {
	if ir := cs.InitializeResult(); ir != nil && ir.Capabilities != nil && ir.Capabilities.Tools == nil {
		return []*mcp.Tool{}, nil
	}
	tools := []*mcp.Tool{}
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		tools = append(tools, t)
		if limit > 0 && len(tools) > limit {
			break
		}
	}
	rawSchemas(tools) // the decoded maps go now; see rawSchemas
	return tools, nil
}

// readTools reads the server's tools: tools/list, and for a server that
// serves the grouping draft or skills its groups (see readGroups). Only a
// failed tools/list is an error; the groups' problems are logged and cost
// what they are about.
func (s *server) readTools(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Tool, []*Group, error) {
	tools, err := listTools(ctx, cs, s.cfg.EffectiveMaxTools())
	s.mu.Lock()
	off := s.groupsOff
	s.mu.Unlock()
	if err != nil || off || !advertisesGroups(cs.InitializeResult()) {
		return tools, nil, err
	}
	groups, failed := readGroups(ctx, cs, tools, s.log)
	if failed && ctx.Err() == nil {
		// A request that failed below JSON-RPC may have taken the
		// connection with it (a server whose HTTP layer refuses methods it
		// does not know answers 400, which ends an SSE session).
		if _, err := listTools(ctx, cs, 1); err != nil {
			return nil, nil, fmt.Errorf("%w: %v", errGroupsDroppedConnection, err)
		}
	}
	return tools, groups, nil
}

// errGroupsDroppedConnection says the connection did not survive the
// groups requests.
var errGroupsDroppedConnection = errors.New("the connection ended while its groups were read")

// groupsChanged re-reads the lists after notifications/groups/list_changed,
// as after tools/list_changed. A notification before the handshake is over
// changes nothing: the start reads the groups after it.
func (s *server) groupsChanged(c *connection) {
	cs := c.live.Load()
	if cs == nil || !advertisesGroups(cs.InitializeResult()) {
		return
	}
	s.refreshTools(c, cs)
}

// toolList is a tool list and groups read from the server, admitted and
// bounded, with what it said at initialize, the start that made the
// connection it was read on and the number of the read (beginList).
type toolList struct {
	start  uint64
	gen    uint64
	init   *mcp.InitializeResult
	tools  []*mcp.Tool
	groups []*Group
}

// beginList numbers a read of the tool list that is about to begin.
func (s *server) beginList() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listGen++
	return s.listGen
}

// prepareList admits and bounds a list read on c by the read numbered gen.
func (s *server) prepareList(c *connection, gen uint64, init *mcp.InitializeResult, tools []*mcp.Tool, groups []*Group) *toolList {
	s.loadCache() // so a list equal to the cached one is not reported as a change
	tools, groups = s.admit(tools, groups)
	return &toolList{start: c.gen, gen: gen, init: init, tools: s.bound(tools), groups: groups}
}

// setTools records a tool list and groups freshly read on c, writes the
// cache, and tells OnToolsChanged when either differs from what was known.
// A list that is older than the one recorded (see recordLocked) is
// dropped.
func (s *server) setTools(c *connection, gen uint64, init *mcp.InitializeResult, tools []*mcp.Tool, groups []*Group) {
	list := s.prepareList(c, gen, init, tools, groups)
	s.mu.Lock()
	entry, changed := s.recordLocked(list)
	s.mu.Unlock()
	s.recorded(entry, changed)
}

// recordLocked records list unless it is older than what is known: read
// on the connection of an earlier start (the server has started again
// since), or by a read that began before the one recorded last (a start's
// list overtaken by the re-read of a list_changed that came during the
// start). It returns the cache entry to write (nil when list was dropped)
// and whether the list changed. s.mu is held.
func (s *server) recordLocked(list *toolList) (entry *cacheEntry, changed bool) {
	if list.start != s.startGen {
		s.log.Debug("a tool list read on the connection of an earlier start was dropped", "start", list.start, "current_start", s.startGen)
		return nil, false
	}
	if list.gen < s.listWritten {
		s.log.Debug("a tool list read before the one recorded last was dropped", "read", list.gen, "recorded", s.listWritten)
		return nil, false
	}
	s.listWritten = list.gen
	tools, groups := list.tools, list.groups
	changed = !s.known || !sameTools(s.tools, tools) || !sameJSON(s.groups, groups)
	s.tools, s.groups, s.known, s.cached = tools, groups, true, false
	s.init = list.init
	saved := s.init
	if saved != nil && saved.Instructions != "" {
		// Instructions may quote the server's config (its token): the file
		// on disk must not hold it.
		masked := *saved
		masked.Instructions = s.secrets.String(saved.Instructions)
		saved = &masked
	}
	return &cacheEntry{Format: cacheFormat, Server: s.name, Key: s.key, SavedAt: s.m.clock.Now().UTC(), Init: saved, Tools: tools, Groups: groups}, changed
}

// recorded writes the cache and tells of a change after recordLocked,
// with s.mu released.
func (s *server) recorded(entry *cacheEntry, changed bool) {
	if entry == nil {
		return
	}
	if err := s.m.cache.save(entry); err != nil {
		s.log.Warn("could not write the tool cache", "error", err)
	}
	if changed && s.m.opts.OnToolsChanged != nil {
		s.m.goBackground(func() { s.m.opts.OnToolsChanged(s.name) })
	}
}

func sameTools(a, b []*mcp.Tool) bool {
	if len(a) != len(b) {
		return false
	}
	return sameJSON(a, b)
}

func sameJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}

// refreshTools re-reads the list (and the groups of a server that serves the
// groups extension) after notifications/tools/list_changed or
// notifications/groups/list_changed. It
// runs in the background: the notification arrives on the connection's reading
// goroutine, which must stay free to read the answer.
func (s *server) refreshTools(c *connection, cs *mcp.ClientSession) {
	s.mu.Lock()
	if s.refreshing {
		// The queued re-read is made on the newest connection that asked:
		// a list_changed from a connection that replaced the one of the
		// re-read in flight (the server restarted meanwhile) must not be
		// answered by a read on the old one.
		if q := s.refreshAgain; q == nil || c.gen >= q.c.gen {
			s.refreshAgain = &refreshAsk{c, cs}
		}
		s.mu.Unlock()
		if hook := s.m.refreshQueued; hook != nil {
			hook(s.name)
		}
		return
	}
	s.refreshing = true
	s.mu.Unlock()
	ok := s.m.goBackground(func() {
		for {
			ctx, cancel := context.WithTimeout(s.m.life, s.timeout)
			gen := s.beginList()
			tools, groups, err := s.readTools(ctx, cs)
			cancel()
			if err != nil {
				s.log.Warn("could not re-read the tool list after a list_changed notification", "error", err)
			} else if !c.isEnded() {
				s.setTools(c, gen, cs.InitializeResult(), tools, groups)
			}
			s.mu.Lock()
			next := s.refreshAgain
			if next == nil {
				s.refreshing = false
				s.mu.Unlock()
				if hook := s.m.refreshEnded; hook != nil {
					hook(s.name)
				}
				return
			}
			s.refreshAgain = nil
			s.mu.Unlock()
			c, cs = next.c, next.cs
		}
	})
	if !ok {
		s.mu.Lock()
		s.refreshing = false
		s.mu.Unlock()
	}
}

// refreshAsk is a queued re-read of the tool list: the connection that
// asked for it and its session.
type refreshAsk struct {
	c  *connection
	cs *mcp.ClientSession
}

func (s *server) status() Status {
	s.loadCache()
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Status{
		Name:         s.name,
		State:        s.phase.public(),
		Transport:    string(s.cfg.Transport),
		Disabled:     s.cfg.Disabled,
		Error:        errorOf(s.lastErr),
		Restarts:     s.restarts,
		IdleStops:    s.idleStops,
		Since:        s.since,
		FailedStarts: s.failedStarts,
		NextStart:    s.nextStart,
	}
	if st.Transport == "" {
		st.Transport = string(config.TransportStdio)
		if s.cfg.URL != "" {
			st.Transport = string(config.TransportHTTP)
		}
	}
	if s.cfg.Disabled {
		st.Error = `disabled in the config ("disabled": true)`
	}
	if s.lastTail != nil {
		st.StderrTail = s.lastTail.String()
	}
	if s.known {
		st.Tools = len(s.filter(s.tools))
		st.ToolsCached = s.cached
	}
	return st
}
