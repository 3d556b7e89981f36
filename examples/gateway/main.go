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
	"flag"
	"fmt"
	"log"
	"log/slog"
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
	cfg := flag.String("config", "", "toolfold config whose MCP servers to serve beside the Go tools")
	addr := flag.String("http", "", "serve streamable HTTP at this address (path /mcp) instead of stdio")
	mode := flag.String("mode", "", "presentation: auto, flat, groups, grouped or search (default: the config's)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	// Logs go to stderr: on stdio, stdout carries only JSON-RPC.
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	gw, err := gateway.Open(ctx, &gateway.Options{
		Config: *cfg, Servers: []*toolfold.Server{local()}, Mode: toolfold.Mode(*mode),
		Name: "my-gateway", Version: "1.0.0", Logger: logger,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer gw.Close()
	if *addr == "" {
		if err := gw.Run(ctx, &mcp.StdioTransport{}); err != nil && ctx.Err() == nil {
			log.Fatal(err)
		}
		return
	}
	h, err := gw.Handler(nil)
	if err != nil {
		log.Fatal(err)
	}
	http.Handle("/mcp", h)
	fmt.Fprintf(os.Stderr, "serving http://%s/mcp\n", *addr)
	log.Fatal(http.ListenAndServe(*addr, nil))
}
