package assemble

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/cmdtool"
	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/redact"
)

// CommandOptions shape how command-line programs become tools.
type CommandOptions struct {
	// Separator joins the program's name and an action's name ("git__log").
	Separator string
	// CacheDir keeps what help discovery found, so later starts need not
	// run the program's help again; empty disables the cache.
	CacheDir string
	// ReadOnly keeps only actions marked read-only and not destructive.
	ReadOnly bool
	Logger   *slog.Logger
	// Secrets are masked in every result of the program's tools (see
	// CommandSecrets); nil masks nothing.
	Secrets *redact.Secrets
}

// CommandSecrets gathers what a command entry holds secret, as for an MCP
// server: every value a ${VAR} reference put into it (but paths such as
// ${HOME}), and the literal env values whose names say they are secret.
func CommandSecrets(c config.CommandConfig) *redact.Secrets {
	s := &redact.Secrets{}
	for k, v := range c.Env {
		if redact.SecretEnvName(k) {
			s.Add(v)
		}
	}
	for name, v := range c.Expanded {
		if !redact.PlaceVariable(name) {
			s.Add(v)
		}
	}
	return s
}

// Program converts a command entry of the config into a program.
func Program(c config.CommandConfig) cmdtool.Program {
	p := cmdtool.Program{
		Name: c.Name, Command: c.Command, Description: c.Description, Dir: c.Cwd,
		Env: map[string]string(c.Env), Timeout: time.Duration(c.Timeout), MaxOutput: int64(c.MaxOutput),
		Discover: string(c.Discover), Include: c.Include, Exclude: c.Exclude,
	}
	names := make([]string, 0, len(c.Actions))
	for name := range c.Actions {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		a := c.Actions[name]
		act := cmdtool.Action{Name: name, Description: a.Description, Argv: a.Argv, Required: a.Required, ReadOnly: a.ReadOnly, Destructive: a.Destructive}
		for _, prm := range a.Params {
			cp := cmdtool.Param{Name: prm.Name, Flag: prm.Flag, Positional: prm.Positional, Pattern: prm.Pattern, Description: prm.Description, Enum: prm.Enum}
			switch prm.Type {
			case config.ParamEnum, "":
				cp.Type = cmdtool.TypeString
			default:
				cp.Type = cmdtool.ParamType(prm.Type)
			}
			if prm.Items != nil {
				cp.Items = cmdtool.ParamType(prm.Items.Type)
			}
			act.Params = append(act.Params, cp)
		}
		p.Actions = append(p.Actions, act)
	}
	return p
}

// CommandTools turns one program into catalog tools and the group that
// holds them. Discovery from help runs here (or comes from the cache).
func CommandTools(ctx context.Context, p cmdtool.Program, opts CommandOptions) ([]*catalog.Tool, catalog.GroupSpec, error) {
	actions, err := discoverCached(ctx, p, opts)
	if err != nil {
		return nil, catalog.GroupSpec{}, fmt.Errorf("command %q: %w", p.Name, err)
	}
	if opts.ReadOnly {
		actions = cmdtool.ReadOnlyActions(actions)
	}
	sep := opts.Separator
	if sep == "" {
		sep = config.DefaultSeparator
	}
	group := catalog.GroupSpec{ID: catalog.GroupID(p.Name), Description: p.Description}
	if group.Description == "" {
		group.Description = fmt.Sprintf("The %s command-line program", p.Command)
	}
	var tools []*catalog.Tool
	for _, a := range actions {
		def := &mcp.Tool{Name: a.Name, Description: a.Description, InputSchema: a.InputSchema(), Annotations: commandAnnotations(a)}
		if def.Description == "" {
			def.Description = fmt.Sprintf("Run %s %s.", p.Command, a.Name)
		}
		id := catalog.ToolID(p.Name + sep + a.Name)
		tools = append(tools, &catalog.Tool{ID: id, Name: a.Name, Source: p.Name, Def: def, Handler: commandHandler(p, a, opts.Secrets)})
		group.Members.Tools = append(group.Members.Tools, id)
	}
	return tools, group, nil
}

// commandAnnotations tells clients what an action does to the world. An
// action nobody marked stays unmarked: the protocol then assumes it may
// write, which is the safe reading.
func commandAnnotations(a cmdtool.Action) *mcp.ToolAnnotations {
	closed := false
	switch {
	case a.ReadOnly && !a.Destructive:
		return &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &closed}
	case a.Destructive:
		yes := true
		return &mcp.ToolAnnotations{DestructiveHint: &yes}
	}
	return nil
}

// commandResult is the structured content of a program's run.
type commandResult struct {
	Argv            []string `json:"argv"`
	ExitCode        int      `json:"exit_code"`
	Stdout          string   `json:"stdout"`
	Stderr          string   `json:"stderr,omitempty"`
	TruncatedStdout bool     `json:"truncated_stdout,omitempty"`
	TruncatedStderr bool     `json:"truncated_stderr,omitempty"`
	TimedOut        bool     `json:"timed_out,omitempty"`
}

func commandHandler(p cmdtool.Program, a cmdtool.Action, secrets *redact.Secrets) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := map[string]any{}
		if raw := bytes.TrimSpace(req.Params.Arguments); len(raw) > 0 && string(raw) != "null" {
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.UseNumber() // integers stay exact; cmdtool checks them
			if err := dec.Decode(&args); err != nil {
				return toolError(fmt.Sprintf("%s %s takes a JSON object of parameters: %v", p.Name, a.Name, err)), nil
			}
		}
		res, err := cmdtool.Run(ctx, p, a, args)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			// The error may quote the argv, which holds what ${VAR} put there.
			return toolError(secrets.String(err.Error())), nil
		}
		res = maskResult(res, secrets)
		structured, _ := json.Marshal(commandResult{Argv: res.Argv, ExitCode: res.ExitCode, Stdout: res.Stdout, Stderr: res.Stderr,
			TruncatedStdout: res.TruncatedStdout, TruncatedStderr: res.TruncatedStderr, TimedOut: res.TimedOut})
		return &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: res.Text()}},
			StructuredContent: json.RawMessage(structured),
			IsError:           res.IsError(),
		}, nil
	}
}

// maskResult masks the secrets in what a run returns: the argv and the
// program's output, which may print a token it was given (a failing login
// saying which token it refused). The program's own URLs are its data and
// stay; its stderr, quoted back as an error is, loses URLs' credentials too.
func maskResult(res *cmdtool.Result, secrets *redact.Secrets) *cmdtool.Result {
	if secrets == nil {
		return res
	}
	out := *res
	out.Argv = make([]string, len(res.Argv))
	for i, arg := range res.Argv {
		out.Argv[i] = secrets.Values(arg)
	}
	out.Stdout = secrets.Values(res.Stdout)
	out.Stderr = secrets.String(res.Stderr)
	return &out
}

func toolError(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: msg}}, IsError: true}
}

// discoverCached runs cmdtool.Discover, keeping its result on disk keyed by
// everything that could change it: the config of the program and the
// program file's identity (path, size, modification time), so an upgrade of
// the program is discovered afresh.
func discoverCached(ctx context.Context, p cmdtool.Program, opts CommandOptions) ([]cmdtool.Action, error) {
	return discoverCachedWith(ctx, p, opts, cmdtool.Discover)
}

// discoverCachedWith is discoverCached reading help with discover. A
// discovery that lost help pages to their timeout is used but not kept:
// a loaded machine may have cost them, and kept, its poorer definitions
// would stand until the program changed.
func discoverCachedWith(ctx context.Context, p cmdtool.Program, opts CommandOptions,
	discover func(context.Context, cmdtool.Program) (cmdtool.Discovery, error)) ([]cmdtool.Action, error) {
	if p.Discover != cmdtool.DiscoverHelp || opts.CacheDir == "" {
		found, err := discover(ctx, p)
		return found.Actions, err
	}
	path, err := cmdtool.ResolveCommand(p)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	keyInput, _ := json.Marshal(struct {
		Program cmdtool.Program
		Path    string
		Size    int64
		ModTime time.Time
	}{p, path, fi.Size(), fi.ModTime()})
	sum := sha256.Sum256(keyInput)
	file := filepath.Join(opts.CacheDir, "commands", p.Name+"-"+hex.EncodeToString(sum[:8])+".json")
	if raw, err := os.ReadFile(file); err == nil {
		var actions []cmdtool.Action
		if err := json.Unmarshal(raw, &actions); err == nil {
			return actions, nil
		}
		if opts.Logger != nil {
			opts.Logger.Warn("ignoring a damaged discovery cache file", "file", file)
		}
	}
	found, err := discover(ctx, p)
	if err != nil {
		return nil, err
	}
	if len(found.Unread) > 0 {
		if opts.Logger != nil {
			opts.Logger.Warn("some help pages timed out; their actions are described from their listing, and the discovery is not cached, so the next start reads them again",
				"command", p.Name, "unread", found.Unread)
		}
		return found.Actions, nil
	}
	if raw, err := json.Marshal(found.Actions); err == nil {
		if err := writeAtomic(file, raw); err != nil && opts.Logger != nil {
			opts.Logger.Warn("could not cache discovered actions", "command", p.Name, "err", err)
		}
	}
	return found.Actions, nil
}

// writeAtomic writes through a temporary file and a rename, so a reader
// never sees half a file.
func writeAtomic(file string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".tmp-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), file)
}
