package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/toolfold/toolfold/internal/assemble"
	"github.com/toolfold/toolfold/internal/gateway"
)

func runServe(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "serve", "[--config F] [--http ADDR] [--mode M] [--groups a,b] [--exclude-groups c] [--read-only]")
	var d deployment
	d.register(fs)
	addr := fs.String("http", "", "serve streamable HTTP at ADDR (path /mcp) instead of stdio, e.g. 127.0.0.1:8080")
	stateless := fs.Bool("stateless", false, "with --http: serve every request on its own, without sessions (auto then serves search)")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error; logs go to stderr")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return usageError{fmt.Sprintf("unknown log level %q: use debug, info, warn or error", *logLevel)}
	}
	// On stdio, stdout carries only JSON-RPC: logs always go to stderr.
	logger := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level}))
	p, b, err := build(ctx, e, d, logger, serveWait)
	if err != nil {
		return err
	}
	defer p.Upstreams.Close()
	p.Follow(b)
	if *addr == "" {
		logger.Info("serving over stdio", "catalog", p.Origin, "mode", b.Gateway.Mode())
		return b.Gateway.ServeStdio(ctx, e.stdin, e.stdout)
	}
	return serveHTTP(ctx, p, b, *addr, *stateless, logger)
}

func serveHTTP(ctx context.Context, p *assemble.Plan, b *assemble.Built, addr string, stateless bool, logger *slog.Logger) error {
	handler, err := b.Gateway.HTTPHandler(&gateway.HTTPOptions{Stateless: stateless})
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", handler)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintln(w, `{"status":"serving"}`)
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %w; pick another address with --http, e.g. 127.0.0.1:8080", addr, err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	logger.Info("serving streamable HTTP", "url", "http://"+ln.Addr().String()+"/mcp", "catalog", p.Origin, "mode", b.Gateway.Mode())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		return nil
	}
}
