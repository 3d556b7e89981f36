package demo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	// The tz database is embedded so that time zone tools work on machines
	// (containers, Windows) that have none installed.
	_ "time/tzdata"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/libspec"
)

// SandboxEnv names the environment variable that moves the default sandbox
// directory, for users of `toolfold demo` who cannot set Options.
const SandboxEnv = "TOOLFOLD_DEMO_SANDBOX"

// Options configure the demo server. The zero value is usable.
type Options struct {
	// Server is passed to toolfold.NewServer (mode, exposition, maxTools,
	// initial groups, logger, …). An empty Name becomes "toolfold-demo" and
	// empty Instructions get a short introduction to the demo.
	Server toolfold.Options
	// SandboxDir is the only directory the files tools can reach. It is
	// created on first use. Empty means DefaultSandboxDir().
	SandboxDir string
	// Clock returns the current time for current_time, time_between and the
	// notes' timestamps; nil means time.Now. Tests fix it.
	Clock func() time.Time
}

// DefaultSandboxDir is where the files tools work when Options.SandboxDir is
// empty: $TOOLFOLD_DEMO_SANDBOX if set, else "toolfold/demo-sandbox" in the
// user's cache directory (~/.cache on Linux, ~/Library/Caches on macOS,
// %LocalAppData% on Windows), else the same under the temporary directory.
// A persistent place, rather than a fresh temporary directory per run, lets
// a user find what an agent wrote and lets a later session read it back.
func DefaultSandboxDir() string {
	if dir := os.Getenv(SandboxEnv); dir != "" {
		return dir
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "toolfold", "demo-sandbox")
}

const serverInstructions = `This is the toolfold demo: small tools for text, encodings, math, time, JSON, notes and files, folded into groups. ` +
	`Call "about" for the list of groups and their tools. Files tools only see one sandbox directory; paths are relative to it.`

// New returns the demo server with every group and tool added. Nothing is
// touched on disk until a files tool is called. opts may be nil.
func New(opts *Options) *toolfold.Server {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Server.Name == "" {
		o.Server.Name = "toolfold-demo"
	}
	if o.Server.Instructions == "" {
		o.Server.Instructions = serverInstructions
	}
	if o.SandboxDir == "" {
		o.SandboxDir = DefaultSandboxDir()
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}

	srv := toolfold.NewServer(&o.Server)
	sandbox := &sandbox{dir: o.SandboxDir}

	addAbout(srv, o.Server.Name, sandbox)

	text := srv.Group("text", &toolfold.GroupOptions{
		Description: "Transform and inspect plain text: change case, make slugs, count words, find and replace with regular expressions, diff two texts.",
		Instructions: "Regular expressions use Go's RE2 syntax: no lookarounds or backreferences. " +
			"Positions in results count characters (Unicode code points), not bytes.",
	})
	addTextTools(text)
	encode := text.Group("encode", &toolfold.GroupOptions{
		Description: "Encode and decode text as base64, URL escapes and hex, and hash it (MD5, SHA-1, SHA-256, SHA-512, optionally as HMAC).",
	})
	addEncodeTools(encode)

	addMathTools(srv.Group("math", &toolfold.GroupOptions{
		Description: "Evaluate arithmetic expressions exactly as written, summarise lists of numbers, convert units of measure and number bases.",
	}))

	addTimeTools(srv.Group("time", &toolfold.GroupOptions{
		Description: "Current time in any IANA time zone, time zone conversion, parsing and formatting dates, adding durations, and the difference between two times.",
		Instructions: "Times are RFC 3339 (2024-05-01T14:30:00+02:00) unless a tool says otherwise; a time without an offset is read in the time_zone argument, " +
			"default UTC. Time zones are IANA names such as Europe/Paris or America/New_York.",
	}), o.Clock)

	addJSONTools(srv.Group("json", &toolfold.GroupOptions{
		Description:  "Validate, pretty-print or compact JSON documents, pick values out by path (a.b[0]) and list the differences between two documents.",
		Instructions: `Documents are passed as JSON text in a string. Paths look like a.b[0].c; use ["odd key"] for keys with dots or spaces and [-1] for the last element.`,
	}))

	addNotesTools(srv.Group("notes", &toolfold.GroupOptions{
		Description:  "A small key-value notebook kept in memory for as long as this server runs: store, read, list, search and delete notes.",
		Instructions: "Notes are lost when the server stops. Keys are free text up to 200 characters; choose stable ones (\"todo\", \"meeting/2024-05-01\") so they can be read back.",
	}), newNoteStore(o.Clock))

	files := srv.Group("files", &toolfold.GroupOptions{
		Description: "Read, write, list and delete files inside one sandbox directory; nothing outside it can be reached.",
		Instructions: "Paths are relative to the sandbox root (\"notes/todo.txt\"); \".\" is the root itself. " +
			"Absolute paths, \"..\" that leaves the sandbox and symbolic links pointing outside are refused. The sandbox is " + sandbox.dir + ".",
	})
	addFilesTools(files, sandbox)
	addSearchTools(files.Group("search", &toolfold.GroupOptions{
		Description:  "Find files in the sandbox by name pattern (glob with **) or by content (regular expression search, like grep).",
		Instructions: "Paths are relative to the sandbox root. Patterns use / as separator on every system.",
	}), sandbox)

	return srv
}

// ptr returns a pointer to v, for the optional fields of mcp types.
func ptr[T any](v T) *T { return &v }

// Annotation sets shared by the tools. The demo never reaches outside the
// process or the sandbox, so every tool is closed-world.
func readOnly(title string) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)}
}

// additive tools change state without losing anything that was there.
func additive(title string, idempotent bool) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{Title: title, DestructiveHint: ptr(false), IdempotentHint: idempotent, OpenWorldHint: ptr(false)}
}

// destructive tools may lose data: they delete or replace it.
func destructive(title string, idempotent bool) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{Title: title, DestructiveHint: ptr(true), IdempotentHint: idempotent, OpenWorldHint: ptr(false)}
}

// schemaFor infers the input schema of In and lets the caller add what
// struct tags cannot say (enums, defaults, bounds). It panics on a type
// that has no schema, which is a programming error seen on the first run.
func schemaFor[In any](adjust func(props map[string]*jsonschema.Schema)) *jsonschema.Schema {
	s, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("demo: inferring the schema of %T: %v", *new(In), err))
	}
	if adjust != nil {
		adjust(s.Properties)
	}
	return s
}

// enum restricts a string property to values.
func enum(p *jsonschema.Schema, values ...string) {
	p.Enum = make([]any, len(values))
	for i, v := range values {
		p.Enum[i] = v
	}
}

// tool is shorthand for registering a typed tool.
func tool[In, Out any](r toolfold.Registrar, t *mcp.Tool, h func(ctx context.Context, in In) (Out, error)) {
	toolfold.AddTool(r, t, func(ctx context.Context, _ *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		out, err := h(ctx, in)
		return nil, out, err
	})
}

// aboutInput is empty: about takes no arguments.
type aboutInput struct{}

type aboutGroup struct {
	Name        string   `json:"name" jsonschema:"the group's full name, as passed to enable_tools"`
	Parent      string   `json:"parent,omitempty" jsonschema:"the parent group, empty for a top-level group"`
	Description string   `json:"description" jsonschema:"what the group's tools are for"`
	Tools       []string `json:"tools" jsonschema:"the group's tools"`
}

type aboutOutput struct {
	Name       string       `json:"name" jsonschema:"the server's name"`
	Summary    string       `json:"summary" jsonschema:"what the demo is"`
	Groups     []aboutGroup `json:"groups" jsonschema:"every group, parents before children"`
	Ungrouped  []string     `json:"ungrouped" jsonschema:"tools that are always visible"`
	ToolCount  int          `json:"tool_count" jsonschema:"how many tools the demo has in all"`
	SandboxDir string       `json:"sandbox_dir" jsonschema:"the directory the files tools work in"`
	Unfolding  string       `json:"unfolding" jsonschema:"how to reach a group's tools"`
}

func addAbout(srv *toolfold.Server, name string, sb *sandbox) {
	// The catalog is read back from the server, so the answer can never
	// drift from what is registered, and it shows what clients can really
	// reach (read-only and excluded groups applied). It is built on the
	// first call: by then the server is serving and can no longer change.
	describe := sync.OnceValues(func() (aboutOutput, error) {
		spec, err := libspec.Of(srv)
		if err != nil {
			return aboutOutput{}, fmt.Errorf("reading the demo catalog: %w", err)
		}
		built, err := catalog.Build(spec)
		if err != nil {
			return aboutOutput{}, fmt.Errorf("building the demo catalog: %w", err)
		}
		out := aboutOutput{
			Name:       name,
			Summary:    "Built-in tools that need nothing installed, folded into groups so an agent only loads what it needs.",
			SandboxDir: sb.dir,
			Unfolding: `If a group's tools are not listed, enable the group, e.g. enable_tools {"groups": ["files", "files.search"]} (a child group needs its parent enabled first), ` +
				`or run any tool without enabling it through call_tool, e.g. call_tool {"name": "calculate", "arguments": {"expression": "2+2"}}. ` +
				`When a group is listed as one tool, pass the tool name as its "action".`,
			Groups:    []aboutGroup{},
			Ungrouped: []string{},
			ToolCount: len(built.Catalog.Tools()),
		}
		for _, root := range built.Catalog.Roots() {
			root.Walk(func(g *catalog.Group) {
				ag := aboutGroup{Name: string(g.ID), Description: g.Description, Tools: []string{}}
				if g.Parent != nil {
					ag.Parent = string(g.Parent.ID)
				}
				for _, t := range g.Tools {
					ag.Tools = append(ag.Tools, t.Name)
				}
				out.Groups = append(out.Groups, ag)
			})
		}
		for _, t := range built.Catalog.Ungrouped() {
			out.Ungrouped = append(out.Ungrouped, t.Name)
		}
		return out, nil
	})
	tool(srv, &mcp.Tool{
		Name: "about",
		Description: "Describe this demo server: every group with its description and tools, the files sandbox directory, and how to unfold a group. " +
			"Call it first to see what is available.",
		Annotations: readOnly("About the demo"),
	}, func(_ context.Context, _ aboutInput) (aboutOutput, error) { return describe() })
}

// oneOf names the valid choices in an error message.
func oneOf(values ...string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
}

// errEmpty is returned for a required text argument that came empty.
func errEmpty(param, example string) error {
	return fmt.Errorf("%s is empty: pass %s", param, example)
}
