// Command library is a small MCP server written with the toolfold library:
// an in-memory issue tracker whose tools live in groups. Copy it as the start
// of your own server.
//
//	go run ./examples/library              # serve over stdio
//	go run ./examples/library -http :8081  # serve streamable HTTP at /mcp
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/http"
	"sort"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold"
)

// Issue is one tracked issue.
type Issue struct {
	Number int    `json:"number"`
	Title  string `json:"title"`
	Body   string `json:"body,omitempty"`
	Open   bool   `json:"open"`
}

// tracker keeps issues in memory; a real server would use a database.
type tracker struct {
	mu     sync.Mutex
	issues map[int]*Issue
	next   int
}

type createIn struct {
	Title string `json:"title" jsonschema:"a one-line summary of the problem"`
	Body  string `json:"body,omitempty" jsonschema:"details, steps to reproduce"`
}

type numberIn struct {
	Number int `json:"number" jsonschema:"the issue number"`
}

type listOut struct {
	Issues []Issue `json:"issues"`
}

func (t *tracker) create(_ context.Context, _ *mcp.CallToolRequest, in createIn) (*mcp.CallToolResult, Issue, error) {
	if in.Title == "" {
		return nil, Issue{}, fmt.Errorf("title is empty: give the issue a one-line summary")
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.next++
	is := &Issue{Number: t.next, Title: in.Title, Body: in.Body, Open: true}
	t.issues[is.Number] = is
	return nil, *is, nil
}

func (t *tracker) list(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, listOut, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := listOut{Issues: []Issue{}}
	for _, is := range t.issues {
		out.Issues = append(out.Issues, *is)
	}
	sort.Slice(out.Issues, func(i, j int) bool { return out.Issues[i].Number < out.Issues[j].Number })
	return nil, out, nil
}

func (t *tracker) close(_ context.Context, _ *mcp.CallToolRequest, in numberIn) (*mcp.CallToolResult, Issue, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	is, ok := t.issues[in.Number]
	if !ok {
		return nil, Issue{}, fmt.Errorf("there is no issue #%d: list_issues shows the numbers", in.Number)
	}
	is.Open = false
	return nil, *is, nil
}

// newServer builds the server; main only chooses the transport.
func newServer() *toolfold.Server {
	t := &tracker{issues: map[int]*Issue{}}
	srv := toolfold.NewServer(&toolfold.Options{Name: "issues-example", Version: "1.0.0"})

	issues := srv.Group("issues", &toolfold.GroupOptions{
		Description:  "Track issues: create, list and close them",
		Instructions: "List issues before creating one, to avoid duplicates.",
	})
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true}
	toolfold.AddTool(issues, &mcp.Tool{Name: "create_issue", Description: "Open a new issue and return it with its number."}, t.create)
	toolfold.AddTool(issues, &mcp.Tool{Name: "list_issues", Description: "List every issue, open and closed.", Annotations: readOnly}, t.list)

	// A child group: agents enable "issues" first, then "issues.triage".
	triage := issues.Group("triage", &toolfold.GroupOptions{Description: "Close issues that are done"})
	toolfold.AddTool(triage, &mcp.Tool{Name: "close_issue", Description: "Close an issue by number."}, t.close)
	return srv
}

func main() {
	addr := flag.String("http", "", "serve streamable HTTP at this address instead of stdio")
	flag.Parse()
	srv := newServer()
	if *addr == "" {
		if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			log.Fatal(err)
		}
		return
	}
	h, err := srv.Handler(nil)
	if err != nil {
		log.Fatal(err)
	}
	http.Handle("/mcp", h)
	log.Printf("serving http://%s/mcp", *addr)
	log.Fatal(http.ListenAndServe(*addr, nil))
}
