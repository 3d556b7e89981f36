package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/httpapi"
	"github.com/toolfold/toolfold/internal/watch"
)

// Reload results, the values of toolfold_config_reloads_total's result.
const (
	// reloadRefused: the new config has problems check would report; the
	// running config keeps serving.
	reloadRefused = "refused"
	// reloadNeedsRestart: the new config is valid, but this build applies
	// a config only at start, so the operator must restart to apply it.
	reloadNeedsRestart = "needs_restart"
	// reloadUnchanged: the files read the same as the running config.
	reloadUnchanged = "unchanged"
)

// reloadStatus is the last reload's outcome, for the log and /healthz.
type reloadStatus = httpapi.ReloadStatus

// reloader validates the config serve was started with each time it is
// asked to, exactly as check would, and reports the outcome. It never
// touches the running gateway: a refused config leaves it serving the old
// one, which is the first half of SPEC §14's "validate first".
type reloader struct {
	path      string
	lookupEnv func(string) (string, bool)
	logger    *slog.Logger
	count     func(result string)

	w *watch.Watcher // nil when files cannot be watched

	mu      sync.Mutex
	running []byte // the config file's bytes at start
	last    *reloadStatus
}

func newReloader(path string, lookupEnv func(string) (string, bool), logger *slog.Logger, count func(string)) *reloader {
	r := &reloader{path: path, lookupEnv: lookupEnv, logger: logger, count: count}
	r.running, _ = os.ReadFile(path)
	// The watch starts now, with the baseline: a save between now and
	// run is seen, not folded into the baseline.
	var err error
	if r.w, err = watch.New(r.files(), logger); err != nil {
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

// reload validates the config on disk now and reports it.
func (r *reloader) reload(trigger string) reloadStatus {
	st := reloadStatus{Trigger: trigger, At: time.Now().UTC()}
	data, _ := os.ReadFile(r.path)
	_, diags := config.Load(r.path, config.Options{LookupEnv: r.lookupEnv})
	switch {
	case diags.HasErrors():
		st.Result = reloadRefused
		for _, p := range diags.Errors() {
			st.Problems = append(st.Problems, p.String())
		}
		r.logger.Error("config reload refused: the running config keeps serving; fix these problems (toolfold check lists them) and save again",
			"trigger", trigger, "config", r.path, "problems", diags.Errors().String())
	case string(data) == string(r.running):
		st.Result = reloadUnchanged
		r.logger.Info("config reload: the config file is unchanged", "trigger", trigger, "config", r.path)
	default:
		st.Result = reloadNeedsRestart
		r.logger.Warn("config reload: the new config is valid, but this version applies a config only at start; restart toolfold to apply it (the running config keeps serving)",
			"trigger", trigger, "config", r.path)
	}
	if r.count != nil {
		r.count(st.Result)
	}
	r.mu.Lock()
	r.last = &st
	r.mu.Unlock()
	return st
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
