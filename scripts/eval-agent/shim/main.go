// Command shim sends ONE MCP request to a running toolfold (streamable
// HTTP) and prints the answer as a model would read it, logging the request
// and the answer's size in tokens to a JSONL file for grading. It keeps one
// MCP session per agent across invocations, so that enabling groups in one
// call holds for the next.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/toolfold/toolfold/internal/tokens"
)

const usage = `usage: shim -r REQUEST_ID METHOD [PARAMS_JSON]

Sends one MCP request to the tool server and prints its answer.
-r names the user request you are working on (its id in the requests
file), so that every step you take for it is logged under it.

Methods you will use:
  tools/list                                  the tools you can call now
  tools/call '{"name": "<tool>", "arguments": {...}}'
                                              call a tool (meta-tools included)
  groups/list                                 the groups (only when the server
                                              offers the grouping extension)

Examples:
  shim -r R01 tools/list
  shim -r R01 tools/call '{"name": "find_tools", "arguments": {"query": "send sms"}}'

Environment: EVAL_URL (default http://127.0.0.1:8931/mcp), EVAL_LOG (default
eval-log.jsonl), EVAL_AGENT (your session's name, default "agent"),
EVAL_RUN (a label for the run), EVAL_EXTENSIONS=grouping (declare the
grouping extension).
`

// entry is one logged request.
type entry struct {
	Time    time.Time       `json:"time"`
	Run     string          `json:"run,omitempty"`
	Agent   string          `json:"agent"`
	Request string          `json:"request"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
	// Tool is the tool the request reaches: the name called, or for
	// call_tool the name inside it.
	Tool    string `json:"tool,omitempty"`
	IsError bool   `json:"is_error,omitempty"`
	Bytes   int    `json:"bytes"`
	Tokens  int    `json:"tokens"`
}

func main() {
	fs := flag.NewFlagSet("shim", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	req := fs.String("r", "", "the user request's id")
	if err := fs.Parse(os.Args[1:]); err != nil || fs.NArg() < 1 || fs.NArg() > 2 || *req == "" {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	params := json.RawMessage(`{}`)
	if fs.NArg() == 2 {
		params = json.RawMessage(fs.Arg(1))
		if !json.Valid(params) {
			fmt.Fprintf(os.Stderr, "PARAMS_JSON is not valid JSON: %s\n\n%s", params, usage)
			os.Exit(2)
		}
	}
	c := client{
		url:   env("EVAL_URL", "http://127.0.0.1:8931/mcp"),
		agent: env("EVAL_AGENT", "agent"),
		log:   env("EVAL_LOG", "eval-log.jsonl"),
		ext:   os.Getenv("EVAL_EXTENSIONS") == "grouping",
		http:  &http.Client{Timeout: 60 * time.Second},
	}
	text, isErr, err := c.send(fs.Arg(0), params)
	if err != nil {
		fmt.Fprintln(os.Stderr, "shim:", err)
		os.Exit(1)
	}
	e := entry{Time: time.Now().UTC(), Run: os.Getenv("EVAL_RUN"), Agent: c.agent, Request: *req, Method: fs.Arg(0), Params: params,
		Tool: toolOf(fs.Arg(0), params), IsError: isErr, Bytes: len(text), Tokens: tokens.Count(text)}
	if err := appendLog(c.log, e); err != nil {
		fmt.Fprintln(os.Stderr, "shim:", err)
		os.Exit(1)
	}
	fmt.Println(text)
}

func env(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// toolOf is the tool a tools/call reaches: for call_tool, the one named
// inside it.
func toolOf(method string, params json.RawMessage) string {
	if method != "tools/call" {
		return ""
	}
	var p struct {
		Name      string `json:"name"`
		Arguments struct {
			Name string `json:"name"`
		} `json:"arguments"`
	}
	_ = json.Unmarshal(params, &p)
	if p.Name == "call_tool" && p.Arguments.Name != "" {
		return p.Arguments.Name
	}
	return p.Name
}

func appendLog(path string, e entry) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("opening the log: %w", err)
	}
	defer f.Close()
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("encoding a log entry: %w", err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("writing the log: %w", err)
	}
	return nil
}

type client struct {
	url, agent, log string
	ext             bool
	http            *http.Client
}

// sessionsFile keeps each agent's MCP session id beside the log.
func (c *client) sessionsFile() string { return c.log + ".sessions.json" }

func (c *client) session() (string, error) {
	sessions := map[string]string{}
	if raw, err := os.ReadFile(c.sessionsFile()); err == nil {
		_ = json.Unmarshal(raw, &sessions)
	}
	if id, ok := sessions[c.agent]; ok {
		return id, nil
	}
	caps := map[string]any{}
	if c.ext {
		// The draft's name, and the earlier one older servers read.
		caps["extensions"] = map[string]any{"io.modelcontextprotocol/grouping": map[string]any{}, "io.modelcontextprotocol/groups": map[string]any{}}
	}
	init := map[string]any{"protocolVersion": "2025-11-25", "capabilities": caps,
		"clientInfo": map[string]any{"name": "eval-agent", "version": "1"}}
	p, _ := json.Marshal(init)
	_, hdr, err := c.post("", "initialize", p, true)
	if err != nil {
		return "", fmt.Errorf("initializing: %w", err)
	}
	id := hdr.Get("Mcp-Session-Id")
	if _, _, err := c.post(id, "notifications/initialized", nil, false); err != nil {
		return "", fmt.Errorf("initialized notification: %w", err)
	}
	sessions[c.agent] = id
	b, _ := json.Marshal(sessions)
	if err := os.WriteFile(c.sessionsFile(), b, 0o644); err != nil {
		return "", fmt.Errorf("saving the session: %w", err)
	}
	return id, nil
}

// send runs one request and renders its result for a model: a tool's text
// content, anything else as compact JSON.
func (c *client) send(method string, params json.RawMessage) (string, bool, error) {
	id, err := c.session()
	if err != nil {
		return "", false, err
	}
	msg, _, err := c.post(id, method, params, true)
	if errors.Is(err, errNoSession) {
		// The server restarted: start a new session once.
		_ = os.Remove(c.sessionsFile())
		if id, err = c.session(); err != nil {
			return "", false, err
		}
		msg, _, err = c.post(id, method, params, true)
	}
	if err != nil {
		return "", false, err
	}
	if msg.Error != nil {
		return "ERROR: " + msg.Error.Message, true, nil
	}
	if method != "tools/call" {
		return string(msg.Result), false, nil
	}
	var res struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		IsError           bool            `json:"isError"`
	}
	if err := json.Unmarshal(msg.Result, &res); err != nil {
		return "", false, fmt.Errorf("decoding the result: %w", err)
	}
	var parts []string
	for _, c := range res.Content {
		if c.Type == "text" {
			parts = append(parts, c.Text)
		}
	}
	if len(parts) == 0 && len(res.StructuredContent) > 0 {
		parts = append(parts, string(res.StructuredContent))
	}
	text := strings.Join(parts, "\n")
	if res.IsError {
		text = "ERROR: " + text
	}
	return text, res.IsError, nil
}

var errNoSession = errors.New("the session is gone")

type message struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// post sends one JSON-RPC message; with wantReply it reads the reply from
// a JSON body or an event stream, skipping notifications.
func (c *client) post(session, method string, params json.RawMessage, wantReply bool) (*message, http.Header, error) {
	body := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		body["params"] = params
	}
	if wantReply {
		body["id"] = 1
	}
	b, _ := json.Marshal(body)
	req, err := http.NewRequest(http.MethodPost, c.url, bytes.NewReader(b))
	if err != nil {
		return nil, nil, fmt.Errorf("building the request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("is toolfold serving at %s? %w", c.url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound && session != "" {
		return nil, nil, errNoSession
	}
	if resp.StatusCode >= 300 {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return nil, nil, fmt.Errorf("%s: HTTP %s: %s", method, resp.Status, strings.TrimSpace(string(raw)))
	}
	if !wantReply {
		return nil, resp.Header, nil
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data:")
			if !ok {
				continue
			}
			var m message
			if json.Unmarshal([]byte(data), &m) == nil && len(m.ID) > 0 {
				return &m, resp.Header, nil
			}
		}
		return nil, nil, fmt.Errorf("%s: the event stream ended without a reply", method)
	}
	var m message
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		return nil, nil, fmt.Errorf("%s: decoding the reply: %w", method, err)
	}
	return &m, resp.Header, nil
}
