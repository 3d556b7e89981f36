// Command gateway serves the MCP servers of a toolfold config together with
// tools written in Go, called in-process: a toolfold gateway of your own.
// The config's servers keep their groups; the Go tools here live in a
// "units" group beside them.
//
//	go run ./examples/gateway -config examples/configs/reference-servers.json
//	go run ./examples/gateway -config toolfold.json -http 127.0.0.1:8082
//
// Without -config it serves the Go tools alone.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold"
	"github.com/toolfold/toolfold/gateway"
)

type lengthIn struct {
	Value float64 `json:"value" jsonschema:"the length to convert"`
	From  string  `json:"from" jsonschema:"unit of value: m, km, ft or mi"`
	To    string  `json:"to" jsonschema:"unit to convert to: m, km, ft or mi"`
}

type lengthOut struct {
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
}

var metres = map[string]float64{"m": 1, "km": 1000, "ft": 0.3048, "mi": 1609.344}

func convert(_ context.Context, in lengthIn) (lengthOut, error) {
	from, ok1 := metres[in.From]
	to, ok2 := metres[in.To]
	if !ok1 || !ok2 {
		return lengthOut{}, fmt.Errorf("units must be m, km, ft or mi; got from %q and to %q", in.From, in.To)
	}
	return lengthOut{Value: in.Value * from / to, Unit: in.To}, nil
}

// local is the in-process part: a library server with one group.
func local() *toolfold.Server {
	srv := toolfold.NewServer(&toolfold.Options{Name: "local"})
	units := srv.Group("units", &toolfold.GroupOptions{Description: "Convert lengths between metric and imperial units"})
	toolfold.AddTool(units, &mcp.Tool{Name: "convert_length", Description: "Convert a length between m, km, ft and mi.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, toolfold.Func(convert))
	return srv
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gateway:", err)
		os.Exit(1)
	}
}

// run returns its errors, so that the deferred Close stops the config's MCP
// servers on every path out.
func run() error {
	cfg := flag.String("config", "", "toolfold config whose MCP servers to serve beside the Go tools")
	addr := flag.String("http", "", "serve streamable HTTP at this loopback address (path /mcp) instead of stdio; it checks no token, so only this machine may connect")
	mode := flag.String("mode", "", "presentation: auto, flat, groups, grouped or search (default: the config's)")
	flag.Parse()
	if *addr != "" {
		// The handler checks no bearer token (the config's http.auth is for
		// toolfold serve): refuse what other machines could reach.
		if err := loopbackOnly(*addr); err != nil {
			return err
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	// Logs go to stderr: on stdio, stdout carries only JSON-RPC.
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	gw, err := gateway.Open(ctx, &gateway.Options{
		Config: *cfg, Servers: []*toolfold.Server{local()}, Mode: toolfold.Mode(*mode),
		Name: "my-gateway", Version: "1.0.0", Logger: logger,
	})
	if err != nil {
		return err
	}
	defer gw.Close()
	if *addr == "" {
		if err := gw.Run(ctx, &mcp.StdioTransport{}); err != nil && ctx.Err() == nil {
			return err
		}
		return nil
	}
	h, err := gw.Handler(nil)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	srv := &http.Server{Addr: *addr, Handler: mux}
	go func() {
		<-ctx.Done()
		srv.Shutdown(context.Background())
	}()
	fmt.Fprintf(os.Stderr, "serving http://%s/mcp\n", *addr)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// loopbackOnly refuses an address other machines could reach.
func loopbackOnly(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("-http %q: %w; give host:port, e.g. 127.0.0.1:8082", addr, err)
	}
	if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
		return nil
	}
	return fmt.Errorf("-http %q: this example checks no bearer token, so it serves only on a loopback address such as 127.0.0.1:8082; to serve other machines, use toolfold serve --http with http.auth tokens in the config", addr)
}
