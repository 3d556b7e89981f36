// Command replay serves one recorded tool list (a catalog of the shared
// set, {"tools": [...]}) as an MCP server over stdio, so that toolfold can
// be run over the 35 shared catalogs without the real servers. Every call
// succeeds and answers which tool it reached with which arguments: an
// evaluation grades which tool an agent called, not what the tool did.
//
// Usage: replay CATALOG.json
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
)

type request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: replay CATALOG.json (a recorded {\"tools\": [...]} list)")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Stdin, os.Stdout); err != nil {
		slog.Error("replay stopped", "err", err)
		os.Exit(1)
	}
}

func run(path string, in io.Reader, out io.Writer) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading the catalog: %w", err)
	}
	var catalog struct {
		Tools json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(raw, &catalog); err != nil {
		return fmt.Errorf("decoding %s: %w", path, err)
	}
	name := strings.TrimSuffix(filepath.Base(path), ".json")
	enc := json.NewEncoder(out)
	reply := func(id json.RawMessage, result any) error {
		return enc.Encode(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var req request
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil || len(req.ID) == 0 {
			continue // a notification, or noise: nothing to answer
		}
		var err error
		switch req.Method {
		case "initialize":
			var p struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			_ = json.Unmarshal(req.Params, &p)
			err = reply(req.ID, map[string]any{
				"protocolVersion": p.ProtocolVersion,
				"capabilities":    map[string]any{"tools": map[string]any{}},
				"serverInfo":      map[string]any{"name": name, "version": "replay"},
			})
		case "tools/list":
			err = reply(req.ID, map[string]any{"tools": catalog.Tools})
		case "tools/call":
			var p struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			}
			_ = json.Unmarshal(req.Params, &p)
			text := fmt.Sprintf("%s: %s was called with %s (a recorded catalog: no real work was done).", name, p.Name, strings.TrimSpace(string(p.Arguments)))
			err = reply(req.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}})
		case "ping":
			err = reply(req.ID, map[string]any{})
		default:
			err = enc.Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32601, "message": "method not found: " + req.Method}})
		}
		if err != nil {
			return fmt.Errorf("writing a reply: %w", err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading requests: %w", err)
	}
	return nil
}
