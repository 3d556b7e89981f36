package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/toolfold/toolfold/internal/assemble"
	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/httpapi"
	"github.com/toolfold/toolfold/internal/watch"
)

// Reload results, the values of toolfold_config_reloads_total's result.
const (
	// reloadRefused: the new config has problems check would report; the
	// running config keeps serving.
	reloadRefused = "refused"
	// reloadApplied: the new config serves now. Settings that apply only
	// at start (listed in the status and the log) wait for a restart.
	reloadApplied = "applied"
	// reloadNeedsRestart: the new config is valid, but nothing of it can
	// be applied while running (serve has no way to apply it, or it adds
	// the first MCP server to a gateway started without any).
	reloadNeedsRestart = "needs_restart"
	// reloadFailed: the new config is valid but applying it failed; the
	// log says why, and the previous catalog keeps serving.
	reloadFailed = "failed"
	// reloadUnchanged: the files read the same as the running config.
	reloadUnchanged = "unchanged"
)

// reloadStatus is the last reload's outcome, for the log and /healthz.
type reloadStatus = httpapi.ReloadStatus

// applier applies a config that check accepts to the running gateway.
type applier func() (assemble.Reconciled, error)

// reloader validates the config serve was started with each time it is
// asked to, exactly as check would, and applies it when valid: a refused
// config leaves the gateway serving the old one.
type reloader struct {
	path      string
	lookupEnv func(string) (string, bool)
	logger    *slog.Logger
	count     func(result string)

	w *watch.Watcher // nil when files cannot be watched

	// reloading makes reloads one at a time: a save seen by the watch
	// and a POST /api/reload at once apply in turn.
	reloading sync.Mutex
	apply     applier // nil: a valid change is only reported
	// tokens applies a reloaded http block's tokens, allowed origins,
	// OAuth and session cap (nil on stdio, which has none) and returns
	// what needs a restart instead.
	tokens func(config.HTTPConfig) []string

	mu      sync.Mutex
	running []byte // the bytes of the files read, as last applied
	applied time.Time
	last    *reloadStatus
}

func newReloader(path string, lookupEnv func(string) (string, bool), logger *slog.Logger, count func(string)) *reloader {
	r := &reloader{path: path, lookupEnv: lookupEnv, logger: logger, count: count, applied: time.Now().UTC()}
	// The config is parsed once for both: at thousands of servers each
	// parse is a visible share of the start.
	files := r.files()
	r.running = contentsOf(files)
	// The watch starts now, with the baseline: a save between now and
	// run is seen, not folded into the baseline.
	var err error
	if r.w, err = watch.New(files, logger); err != nil {
		logger.Warn("config file changes will not be seen; SIGHUP still reloads", "err", err)
	}
	return r
}

// files lists what a reload reads: the config and the envFiles its servers
// name, so that a rotated secret in an envFile is a change too.
func (r *reloader) files() []string {
	out := []string{r.path}
	cfg, diags := config.Load(r.path, config.Options{LookupEnv: r.lookupEnv})
	if diags.HasErrors() || cfg == nil {
		return out
	}
	for _, s := range cfg.MCPServers {
		if s.EnvFile == "" {
			continue
		}
		p := s.EnvFile
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(r.path), p)
		}
		out = append(out, p)
	}
	sort.Strings(out[1:])
	return out
}

// contents is the bytes of every file a reload reads, each after its
// name: a rotated secret in an envFile is a change as much as the config.
func (r *reloader) contents() []byte { return contentsOf(r.files()) }

// contentsOf is contents of the files listed.
func contentsOf(files []string) []byte {
	var out []byte
	for _, f := range files {
		data, _ := os.ReadFile(f)
		out = append(append(append(out, f...), 0), data...)
		out = append(out, 0)
	}
	return out
}

// setApply makes valid changes apply through a from now on.
func (r *reloader) setApply(a applier) {
	r.reloading.Lock()
	defer r.reloading.Unlock()
	r.apply = a
}

// setTokens makes reloads apply http.auth.tokens through fn.
func (r *reloader) setTokens(fn func(config.HTTPConfig) []string) {
	r.reloading.Lock()
	defer r.reloading.Unlock()
	r.tokens = fn
}

// applyTokens applies the reloaded config's tokens, if serving HTTP.
// Called by the applier, under reloading.
func (r *reloader) applyTokens(h config.HTTPConfig) []string {
	if r.tokens == nil {
		return nil
	}
	return r.tokens(h)
}

// reload validates the config on disk now, applies it when it is valid
// and changed, and reports the outcome.
func (r *reloader) reload(trigger string) reloadStatus {
	r.reloading.Lock()
	defer r.reloading.Unlock()
	st := reloadStatus{Trigger: trigger, At: time.Now().UTC()}
	data := r.contents()
	_, diags := config.Load(r.path, config.Options{LookupEnv: r.lookupEnv})
	r.mu.Lock()
	unchanged := string(data) == string(r.running)
	r.mu.Unlock()
	raw, _ := os.ReadFile(r.path)
	switch {
	case len(bytes.TrimSpace(raw)) == 0:
		// An editor that writes in place truncates first: the empty file
		// is a save in progress far more often than a wish to serve
		// nothing, which would stop every server.
		st.Result = reloadRefused
		st.Problems = []string{r.path + ": the config file is empty (a save in progress, or truncated); the running config keeps serving. To serve nothing, write {}"}
		r.logger.Warn("config reload refused: the config file is empty; the running config keeps serving", "trigger", trigger, "config", r.path)
	case diags.HasErrors():
		st.Result = reloadRefused
		for _, p := range diags.Errors() {
			st.Problems = append(st.Problems, p.String())
		}
		r.logger.Error("config reload refused: the running config keeps serving; fix these problems (toolfold check lists them) and save again",
			"trigger", trigger, "config", r.path, "problems", diags.Errors().String())
	case unchanged:
		st.Result = reloadUnchanged
		r.logger.Info("config reload: the config file is unchanged", "trigger", trigger, "config", r.path)
	case r.apply == nil:
		st.Result = reloadNeedsRestart
		r.logger.Warn("config reload: the new config is valid, but it cannot be applied yet; restart toolfold to apply it (the running config keeps serving)",
			"trigger", trigger, "config", r.path)
	default:
		r.applyNow(&st, data)
	}
	if r.count != nil {
		r.count(st.Result)
	}
	r.mu.Lock()
	st.Applied = r.applied
	r.last = &st
	r.mu.Unlock()
	return st
}

// applyNow applies the valid config whose files read data, filling st in,
// and writes the reload's audit line: what it added, removed, changed.
func (r *reloader) applyNow(st *reloadStatus, data []byte) {
	rec, err := r.apply()
	st.Added, st.Removed, st.Changed, st.NeedsRestart = rec.Added, rec.Removed, rec.Changed, rec.NeedsRestart
	switch {
	case errors.Is(err, assemble.ErrNeedsRestart):
		st.Result, st.Error = reloadNeedsRestart, err.Error()
		r.logger.Warn("config reload: the new config is valid but needs a restart to apply; the running config keeps serving",
			"trigger", st.Trigger, "config", r.path, "why", err)
		return
	case err != nil:
		st.Result, st.Error = reloadFailed, err.Error()
		r.logger.Error("config reload failed: the new config is valid but could not be applied",
			"trigger", st.Trigger, "config", r.path, "err", err)
		return
	}
	st.Result = reloadApplied
	r.mu.Lock()
	r.running = data
	r.applied = st.At
	r.mu.Unlock()
	r.logger.Info("audit: config reload applied", "trigger", st.Trigger, "config", r.path,
		"added", rec.Added, "removed", rec.Removed, "changed", rec.Changed, "unchanged", len(rec.Unchanged))
	if len(rec.NeedsRestart) > 0 {
		r.logger.Warn("config reload: these settings changed but apply only after a restart; the rest of the config was applied",
			"settings", rec.NeedsRestart)
	}
}

// appliedAt is when the config now serving was applied.
func (r *reloader) appliedAt() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.applied
}

// lastStatus is the last reload's outcome, nil before the first.
func (r *reloader) lastStatus() *reloadStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last == nil {
		return nil
	}
	c := *r.last
	return &c
}

// run reloads on every file change and every value of hup until ctx ends.
func (r *reloader) run(ctx context.Context, hup <-chan os.Signal) {
	var changes <-chan struct{}
	if w := r.w; w != nil {
		changes = w.Changes()
		done := make(chan struct{})
		go func() { defer close(done); _ = w.Run(ctx) }()
		defer func() { <-done }()
		r.logger.Debug("watching files for config reloads", "files", w.Paths())
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-changes:
			r.reload("file change")
		case <-hup:
			r.reload("SIGHUP")
		}
	}
}
