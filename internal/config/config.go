package config

import (
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Defaults applied when a key is absent. They are constants so every package that
// needs them (the gateway, the docs, `toolfold check`) agrees.
const (
	// DefaultServerTimeout bounds one call to an MCP server.
	DefaultServerTimeout = 60 * time.Second
	// DefaultStartTimeout bounds an MCP server's start: spawning or dialing
	// it, the handshake and its first tool list. Generous, because a cold
	// "npx -y" may first download the package; a request that needs the
	// tools of a server still starting waits for it at most this long.
	DefaultStartTimeout = 60 * time.Second
	// DefaultCommandTimeout bounds one run of a command-line program.
	DefaultCommandTimeout = 30 * time.Second
	// DefaultMaxOutput caps the captured stdout (and, separately, stderr) of a program.
	DefaultMaxOutput ByteSize = 256 * 1024
	// DefaultMaxMessageBytes bounds one message from an MCP server: a
	// larger one fails the request it answers instead of being held whole.
	// The largest message a server sends is its tools/list when it does
	// not page it: 20,000 tools of the recorded catalogs' size (about 1.5
	// KB each) make 29 MB, past the Go SDK's own 16 MiB. 64 MiB lets such
	// a server start while a runaway answer still cannot fill memory.
	DefaultMaxMessageBytes ByteSize = 64 << 20
	// DefaultMaxTools bounds how many tools toolfold keeps of one MCP
	// server: enough for the largest servers seen (a 20,000-tool one
	// serves with the defaults), while a runaway list cannot fill memory.
	DefaultMaxTools = 40000
	// DefaultSeparator joins a server's prefix and its tool name on the wire.
	DefaultSeparator = "__"
	// DefaultMaxSessions caps the HTTP sessions open at once.
	DefaultMaxSessions = 10000
	// DefaultSessionIdleTimeout closes an HTTP session without requests this long.
	DefaultSessionIdleTimeout = 30 * time.Minute
)

// Config is a whole toolfold config file after loading: variables expanded, defaults
// applied, transports normalized. Only mcpServers is needed; a Claude Desktop or Cursor
// config is a valid toolfold config.
type Config struct {
	// File is the path the config was loaded from ("" for a config built in code).
	// Problems found later (by discovery) should name it; see Config.Problemf.
	File string `json:"-"`

	// MCPServers are the upstream MCP servers to fold, by key. The key is the
	// server's default prefix and default group.
	MCPServers map[string]ServerConfig `json:"mcpServers,omitempty"`
	// Commands turns command-line programs into groups of tools (docs/design.md#command-line-programs), by key.
	// The key names the group and prefixes the tools ("git" → "git__log").
	Commands map[string]CommandConfig `json:"commands,omitempty"`
	// Groups declares groups or describes the implicit ones (a server's or a
	// command's group), by name. Dots in a name mean hierarchy: "code.repos" is a
	// child of "code".
	Groups map[string]GroupConfig `json:"groups,omitempty"`
	// Disclosure says how the catalog is presented to clients (docs/design.md#modes, #meta-tools).
	Disclosure DisclosureConfig `json:"disclosure"`
	// Exposition says how tools appear on the wire (docs/design.md#expositions).
	Exposition ExpositionConfig `json:"exposition"`
	// HTTP configures the streamable HTTP front (docs/design.md#http).
	HTTP HTTPConfig `json:"http"`
	// ServerDefaults apply to every server under mcpServers that does not set
	// the same key itself.
	ServerDefaults ServerDefaults `json:"serverDefaults"`
	// ReadOnly hides every tool not marked read-only, in every view.
	ReadOnly bool `json:"readOnly,omitempty"`
	// ByteForwarding forwards a tools/call to a running stdio server as
	// bytes, without decoding it (the fast path); false sends every call
	// through the typed path. Both keep the same checks. Default true;
	// TOOLFOLD_BYTE_FORWARDING=off and --no-byte-forwarding also turn it off.
	ByteForwarding *bool `json:"byteForwarding,omitempty"`
	// AnswerBytesInFlight bounds the bytes of answers toolfold holds for
	// clients that have not read them yet, over every client ("256MiB";
	// zero means the gateway's default, 256 MiB). An answer that would
	// exceed it is refused with an error that names this key.
	AnswerBytesInFlight ByteSize `json:"answerBytesInFlight,omitempty"`
	// Telemetry exports traces over OTLP; off by default. The standard
	// OTEL_* environment variables set what it leaves out.
	Telemetry TelemetryConfig `json:"telemetry"`
	// Trust pins what upstreams say to the model and holds what changes
	// (docs/trust.md).
	Trust TrustConfig `json:"trust"`

	// positions maps key paths to lines, so problems found after loading can still
	// point into the file.
	positions map[string]int
}

// TrustConfig pins every definition an upstream gives the model in a lock
// file and says what to do with one that is not pinned as it is
// (docs/trust.md). The zero value is the default policy.
type TrustConfig struct {
	// LockFile is the lock's path; relative to the config's directory.
	// Default "toolfold.lock" beside the config.
	LockFile string `json:"lockFile,omitempty"`
	// ReadOnly never writes the lock: for a lock mounted into replicas, so a
	// replica never pins what nobody approved. New and changed items are
	// held in memory and shown by /api/pins.
	ReadOnly bool `json:"readOnly,omitempty"`
	// OnChange is for a pinned item whose definition changed: "hold"
	// (default), "warn" or "accept".
	OnChange string `json:"onChange,omitempty"`
	// OnNew is for an item new to an already-pinned server: "hold"
	// (default) or "accept".
	OnNew string `json:"onNew,omitempty"`
	// NewServers is for a server the lock has not seen: "accept" (default,
	// pin on first sight) or "hold" (quarantine until approved).
	NewServers string `json:"newServers,omitempty"`
	// OnFinding is for a definition the poisoning scan flags: "warn"
	// (default) or "hold".
	OnFinding string `json:"onFinding,omitempty"`
}

// LockPath is the lock file's path: trust.lockFile, relative to the config's
// directory, or toolfold.lock beside the config.
func (c *Config) LockPath() string {
	p := c.Trust.LockFile
	if p == "" {
		p = "toolfold.lock"
	}
	if filepath.IsAbs(p) || c.File == "" {
		return p
	}
	return filepath.Join(filepath.Dir(c.File), p)
}

// TelemetryConfig exports OpenTelemetry traces over OTLP: a span per
// request toolfold serves and per request it sends upstream, joined to the
// trace the client sent (traceparent in _meta or in the HTTP headers).
// Keys left empty are read from the standard OTEL_* variables.
type TelemetryConfig struct {
	// Tracing turns trace export on; OTEL_TRACES_EXPORTER=otlp does too.
	// OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none keep it off.
	Tracing bool `json:"tracing,omitempty"`
	// Endpoint is the collector's OTLP address as a URL, such as
	// "http://127.0.0.1:4318" (HTTP) or "http://127.0.0.1:4317" (gRPC).
	// Empty: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT,
	// else the exporter's default (localhost, 4318 or 4317).
	Endpoint string `json:"endpoint,omitempty"`
	// Protocol is "http/protobuf" or "grpc". Empty:
	// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or OTEL_EXPORTER_OTLP_PROTOCOL, else
	// "http/protobuf".
	Protocol string `json:"protocol,omitempty"`
	// ServiceName names toolfold in the traces. Empty: OTEL_SERVICE_NAME,
	// else "toolfold".
	ServiceName string `json:"serviceName,omitempty"`
	// RecordArguments puts what clients sent to meta-tools (find_tools
	// queries, enable_tools groups) in span attributes. Off by default:
	// a query may quote a secret. Tool arguments are never recorded.
	RecordArguments bool `json:"recordArguments,omitempty"`
}

// Transport is how toolfold talks to an upstream MCP server.
type Transport string

// Transports. A server with a command uses stdio; one with a url uses http unless
// told "sse".
const (
	TransportStdio Transport = "stdio"
	TransportHTTP  Transport = "http"
	TransportSSE   Transport = "sse"
)

// ServerConfig is one upstream MCP server: either a program speaking stdio
// (command) or a remote endpoint (url), never both.
type ServerConfig struct {
	// Name is the server's key under mcpServers, filled in by the loader.
	Name string `json:"-"`

	// Command is the program to run for a stdio server, looked up on PATH.
	Command string `json:"command,omitempty"`
	// Args are the program's arguments, passed as they are (no shell).
	Args []string `json:"args,omitempty"`
	// Env is added to the program's environment. Values are secrets: they print
	// as "***" (see SecretMap).
	Env SecretMap `json:"env,omitempty"`
	// EnvFile names a file of KEY=VALUE lines (Cursor's "envFile") read at load
	// time into Env; keys set in Env win. A relative path is resolved against the
	// config file's directory.
	EnvFile string `json:"envFile,omitempty"`
	// Cwd is the program's working directory; a relative path is resolved against
	// the config file's directory.
	Cwd string `json:"cwd,omitempty"`

	// URL is a remote server's endpoint (http or https). Windsurf's "serverUrl" is
	// accepted as another spelling.
	URL string `json:"url,omitempty" alias:"serverUrl"`
	// Headers are sent with every request to URL, typically Authorization. Values
	// are secrets and print as "***".
	Headers SecretMap `json:"headers,omitempty"`
	// Transport is "http" (streamable HTTP, the default for url), "sse", or
	// "stdio" (implied by command). The "type" key Cursor, VS Code and Claude Code
	// write is accepted as another spelling, including "streamable-http". After
	// loading it is always set.
	Transport Transport `json:"transport,omitempty" alias:"type"`

	// Prefix namespaces the server's tools on the wire ("github" →
	// "github__create_issue"). nil means the default, the server's key; a pointer
	// to "" means no prefix at all. Use EffectivePrefix.
	Prefix *string `json:"prefix,omitempty"`
	// Include keeps only the server's tools whose own (unprefixed) names match one
	// of these globs; empty keeps all.
	Include []string `json:"include,omitempty"`
	// Exclude drops tools matching these globs, applied after Include.
	Exclude []string `json:"exclude,omitempty"`
	// Group is the group the server's tools join. nil means a group named after
	// the server's key; a pointer to "" means the tools are ungrouped (always on).
	// Use EffectiveGroup.
	Group *string `json:"group,omitempty"`
	// Lazy starts the server on first need instead of at startup. Default true.
	Lazy bool `json:"lazy"`
	// Timeout bounds each call ("60s"; a bare number is seconds). Default 60s.
	Timeout Duration `json:"timeout"`
	// StartTimeout bounds the server's start: spawn or dial, handshake and
	// first tool list. A request that needs the tools of a server still
	// starting waits for it at most this long. Zero means
	// serverDefaults.startTimeout; Validate fills it in, so after loading
	// the value is the one that applies.
	StartTimeout Duration `json:"startTimeout"`
	// IdleTimeout stops a started stdio server after this long without a
	// request; its cached tools stay listed and the next request starts it
	// again. nil means serverDefaults.idleTimeout; a pointer to 0 means never.
	// Validate fills it in for every stdio server from serverDefaults, so
	// after loading a stdio server's value is the one that applies. Remote
	// servers (url) are never stopped for idleness: there is no process to
	// reclaim, and closing their session would drop state they keep for it.
	IdleTimeout *IdleTimeout `json:"idleTimeout,omitempty"`
	// MaxMessageBytes bounds one message the server sends ("64MiB", or
	// bytes); a larger one fails the request it answers, and the
	// connection carries on. Zero means DefaultMaxMessageBytes. Use
	// EffectiveMaxMessageBytes.
	MaxMessageBytes ByteSize `json:"maxMessageBytes,omitempty"`
	// MaxTools bounds how many of the server's tools are kept; those past
	// it are left out with a warning. Zero means DefaultMaxTools. Use
	// EffectiveMaxTools.
	MaxTools int `json:"maxTools,omitempty"`
	// Disabled keeps the server in the file but never starts it.
	Disabled bool `json:"disabled,omitempty"`
	// Optional lets the rest of the config serve when this server cannot
	// be configured: if one of its values uses an environment variable
	// that is not set, the server is left out with a warning (and counts
	// as disabled) instead of the whole config being refused.
	Optional bool `json:"optional,omitempty"`
	// AutoGroups, when false, keeps the server's group whole however big
	// it is (see disclosure.autoGroups); nil follows disclosure.autoGroups.
	AutoGroups *bool `json:"autoGroups,omitempty"`
	// Sandbox is the kernel sandbox a stdio server runs in; nil runs it
	// with the user's full rights. Validate fills in
	// serverDefaults.sandbox for a stdio server that sets none, so after
	// loading the value is the one that applies.
	Sandbox *SandboxConfig `json:"sandbox,omitempty"`

	// Expanded maps each environment variable that a ${VAR} reference in
	// this entry read (in any key: url, headers, env, args) to the value
	// substituted for it. The loader fills it in; whatever came from the
	// environment is treated as a secret wherever toolfold redacts, since
	// the config cannot say where in a value it went (a URL's path, say).
	Expanded SecretMap `json:"-"`
}

// ServerDefaults are settings of every server under mcpServers, each
// overridden by the same key in a server's own entry.
type ServerDefaults struct {
	// IdleTimeout stops a started stdio server after this long without a
	// request (call, prompt, resource read, completion...); its cached tool
	// list stays and the next request starts it again, as on first use. A
	// server is never stopped while a request is in flight, while a client
	// holds a resource subscription on it, or while it is starting. Default
	// 0: never (servers run until toolfold exits).
	IdleTimeout IdleTimeout `json:"idleTimeout"`
	// StartTimeout is the startTimeout of every server that sets none.
	// Default 60s.
	StartTimeout Duration `json:"startTimeout"`
	// Sandbox is the sandbox of every stdio server that sets none.
	Sandbox *SandboxConfig `json:"sandbox,omitempty"`
}

// EffectiveStartTimeout is how long the server may take to start.
func (s ServerConfig) EffectiveStartTimeout() time.Duration {
	if s.StartTimeout > 0 {
		return s.StartTimeout.Std()
	}
	return DefaultStartTimeout
}

// EffectiveMaxMessageBytes is the largest message the server may send.
func (s ServerConfig) EffectiveMaxMessageBytes() ByteSize {
	if s.MaxMessageBytes > 0 {
		return s.MaxMessageBytes
	}
	return DefaultMaxMessageBytes
}

// EffectiveMaxTools is how many of the server's tools are kept at most.
func (s ServerConfig) EffectiveMaxTools() int {
	if s.MaxTools > 0 {
		return s.MaxTools
	}
	return DefaultMaxTools
}

func (s *ServerConfig) setDefaults() {
	s.Lazy = true
	s.Timeout = Duration(DefaultServerTimeout)
}

// ignoredKeys lists keys other MCP clients write into the same file that toolfold
// accepts and ignores (with a warning), so their configs load unchanged.
func (*ServerConfig) ignoredKeys() map[string]string {
	return map[string]string{
		"autoApprove": "an auto-approval list for Cline and Roo Code",
		"alwaysAllow": "an auto-approval list for Cline and Roo Code",
	}
}

// EffectivePrefix is the namespace of the server's tools: Prefix when set, else the
// server's key made wire-safe (characters outside [A-Za-z0-9_-] become "_").
func (s ServerConfig) EffectivePrefix() string {
	if s.Prefix != nil {
		return *s.Prefix
	}
	return wireSafe(s.Name)
}

// EffectiveGroup is the group the server's tools join and whether they join one at
// all: Group when set (false when it is ""), else the server's key made wire-safe
// (dots too become "_", so a key never implies a parent group).
func (s ServerConfig) EffectiveGroup() (name string, grouped bool) {
	if s.Group != nil {
		return *s.Group, *s.Group != ""
	}
	return wireSafe(s.Name), true
}

// DiscoverMode says how a command's actions are found besides those declared.
type DiscoverMode string

// Discovery modes.
const (
	// DiscoverNone uses only the declared actions.
	DiscoverNone DiscoverMode = ""
	// DiscoverHelp reads the program's own help output.
	DiscoverHelp DiscoverMode = "help"
)

// CommandConfig turns one command-line program into a group of tools (docs/design.md#command-line-programs).
type CommandConfig struct {
	// Name is the entry's key under commands, filled in by the loader. It names
	// the group and prefixes the tools.
	Name string `json:"-"`

	// Command is the program, looked up on PATH, or a path to it.
	Command string `json:"command"`
	// Description describes the group to the agent.
	Description string `json:"description,omitempty"`
	// Cwd is the fixed working directory; the model never sets it. A relative
	// path is resolved against the config file's directory.
	Cwd string `json:"cwd,omitempty"`
	// Env is added to a minimal environment. Values print as "***".
	Env SecretMap `json:"env,omitempty"`
	// Timeout bounds one run. Default 30s.
	Timeout Duration `json:"timeout"`
	// MaxOutput caps the captured output ("256KiB", "1MB", or bytes). Default 256KiB.
	MaxOutput ByteSize `json:"maxOutput"`
	// Discover, when "help", builds actions from the program's own help text.
	Discover DiscoverMode `json:"discover,omitempty"`
	// Include keeps only actions (subcommand paths such as "remote add") matching
	// one of these globs; empty keeps all.
	Include []string `json:"include,omitempty"`
	// Exclude drops actions matching these globs, applied after Include.
	Exclude []string `json:"exclude,omitempty"`
	// Actions are declared actions by name; they override or extend discovered ones.
	Actions map[string]ActionConfig `json:"actions,omitempty"`
	// Disabled keeps the entry in the file but offers none of its tools.
	Disabled bool `json:"disabled,omitempty"`

	// Expanded maps each environment variable that a ${VAR} reference in
	// this entry read (command, env, an action's argv) to the value
	// substituted for it, as for servers: the loader fills it in, and what
	// came from the environment is masked in the tools' results.
	Expanded SecretMap `json:"-"`
}

func (c *CommandConfig) setDefaults() {
	c.Timeout = Duration(DefaultCommandTimeout)
	c.MaxOutput = DefaultMaxOutput
}

// ActionConfig is one declared action of a command: fixed words plus typed
// parameters. The argv is: command, Argv, each given flag parameter, "--", then the
// positional parameters in declared order.
type ActionConfig struct {
	// Name is the action's key under actions, filled in by the loader.
	Name string `json:"-"`

	// Description describes the action to the agent.
	Description string `json:"description,omitempty"`
	// Argv are the fixed words placed right after the command ("log", "--no-color").
	Argv []string `json:"argv,omitempty"`
	// Params are the parameters the model may set, in the order declared in the
	// file (the order positionals are placed in).
	Params Params `json:"params,omitempty"`
	// Required names the parameters that must be given.
	Required []string `json:"required,omitempty"`
	// ReadOnly marks an action that changes nothing (readOnlyHint).
	ReadOnly bool `json:"readOnly,omitempty"`
	// Destructive marks an action that may destroy data (destructiveHint); such
	// actions are hidden in read-only mode.
	Destructive bool `json:"destructive,omitempty"`
}

// ParamType is the type of one action parameter.
type ParamType string

// Parameter types. An enum parameter is a string restricted to Param.Enum; an array
// is a list of strings.
const (
	ParamString  ParamType = "string"
	ParamInteger ParamType = "integer"
	ParamNumber  ParamType = "number"
	ParamBoolean ParamType = "boolean"
	ParamEnum    ParamType = "enum"
	ParamArray   ParamType = "array"
)

// Params is an ordered list of parameters, written in the file as an object whose
// key order is kept (positional parameters are placed in that order).
type Params []Param

// Param is one parameter of an action.
type Param struct {
	// Name is the parameter's key, which is its property name in the input schema.
	Name string `json:"-"`

	// Type is string (the default), integer, number, boolean, enum or array.
	Type ParamType `json:"type,omitempty"`
	// Flag is the option the value is passed with ("--max-count"); the value goes
	// in as "--max-count=3", a true boolean as "--oneline", an array repeats it.
	Flag string `json:"flag,omitempty"`
	// Positional places the value after "--" instead of behind a flag. Exactly one
	// of Flag and Positional is set.
	Positional bool `json:"positional,omitempty"`
	// Description carries into the input schema.
	Description string `json:"description,omitempty"`
	// Enum lists the allowed values of an enum parameter (or restricts a string).
	Enum []string `json:"enum,omitempty"`
	// Items describes array elements; only {"type": "string"} is supported.
	Items *ParamItems `json:"items,omitempty"`
	// Pattern is a regular expression the value must match; carries into the schema.
	Pattern string `json:"pattern,omitempty"`
}

// ParamItems is the element type of an array parameter.
type ParamItems struct {
	// Type of each element; only "string" is supported.
	Type ParamType `json:"type"`
}

// GroupState is a group's default state in every new view.
type GroupState string

// Group states.
const (
	// GroupAvailable groups are hidden until a client enables them (the default).
	GroupAvailable GroupState = "available"
	// GroupEnabled groups are enabled in every new view.
	GroupEnabled GroupState = "enabled"
	// GroupExcluded groups and their tools do not exist for clients.
	GroupExcluded GroupState = "excluded"
)

// ExpositionStyle is how one group's tools appear on the wire (docs/design.md#expositions).
type ExpositionStyle string

// Exposition styles.
const (
	// ExposeFlat shows one wire tool per tool ("github__create_issue").
	ExposeFlat ExpositionStyle = "flat"
	// ExposeGrouped shows one wire tool per group with an "action" property.
	ExposeGrouped ExpositionStyle = "grouped"
)

// GroupConfig declares a group or adds to an implicit one.
type GroupConfig struct {
	// Name is the group's key under groups, filled in by the loader.
	Name string `json:"-"`

	// Description tells the agent what the group is for.
	Description string `json:"description,omitempty"`
	// Parent makes this group a child of another, which must be enabled first.
	// A dotted name ("code.repos") implies its parent ("code") when Parent is unset.
	Parent string `json:"parent,omitempty"`
	// Tools adds tools whose namespaced names match these globs ("github__*issue*").
	Tools []string `json:"tools,omitempty"`
	// Prefixes adds tools whose namespaced names start with these strings;
	// shorthand for the glob "<prefix>*".
	Prefixes []string `json:"prefixes,omitempty"`
	// Servers adds every tool of these servers (keys of mcpServers).
	Servers []string `json:"servers,omitempty"`
	// Tags adds tools whose _meta tags include one of these.
	Tags []string `json:"tags,omitempty"`
	// Instructions are returned to the agent when it enables the group.
	Instructions string `json:"instructions,omitempty"`
	// Default is the group's state in a new view: available (default), enabled or
	// excluded. Flags and MCP_GROUP_<NAME> override it (see ResolveGroupStates).
	Default GroupState `json:"default,omitempty"`
	// Exposition is flat or grouped; after loading, unset means exposition.default.
	Exposition ExpositionStyle `json:"exposition,omitempty"`
	// AutoGroups says whether the group's tools may be split into derived
	// groups (disclosure.autoGroups). nil means yes for a server's or a
	// command's group and no for a group with member rules of its own (its
	// author already chose its tools).
	AutoGroups *bool `json:"autoGroups,omitempty"`
	// Merge names derived groups ("github.issue") whose tools this group
	// takes over; they then disappear. One name renames a derived group,
	// several merge them.
	Merge []string `json:"merge,omitempty"`
}

// Mode is how the catalog is presented (docs/design.md#modes).
type Mode string

// Modes.
const (
	ModeFlat    Mode = "flat"
	ModeGroups  Mode = "groups"
	ModeGrouped Mode = "grouped"
	ModeSearch  Mode = "search"
	ModeAuto    Mode = "auto"
)

// UngroupedPolicy says whether tools in no group are shown.
type UngroupedPolicy string

// Ungrouped policies.
const (
	UngroupedVisible UngroupedPolicy = "visible"
	UngroupedHidden  UngroupedPolicy = "hidden"
)

// DisclosureConfig is how the catalog is disclosed to clients.
type DisclosureConfig struct {
	// Mode is flat, groups, grouped, search or auto (default).
	Mode Mode `json:"mode"`
	// InitialGroups are enabled in every new view.
	InitialGroups []string `json:"initialGroups,omitempty"`
	// MaxTools caps the distinct grouped tools visible in a view; 0 means no limit.
	MaxTools int `json:"maxTools,omitempty"`
	// Ungrouped is visible (default) or hidden.
	Ungrouped UngroupedPolicy `json:"ungrouped"`
	// RefreshingClients are the clientInfo.name values (globs, case-insensitive)
	// of clients known to honour notifications/tools/list_changed; auto mode gives
	// them groups mode and everyone else search mode. A trailing "*" matches
	// any suffix. Absent means toolfold's built-in list (the gateway's
	// DefaultRefreshingClients, explained in the README); an empty list
	// means none.
	RefreshingClients []string `json:"refreshingClients"`
	// SearchingClients are the clientInfo.name values (same globs) of clients
	// known to run their own tool search over the full list; auto mode gives
	// them the flat list, with each tool's groups in its _meta, before
	// consulting RefreshingClients. Absent means the built-in list (the
	// gateway's DefaultSearchingClients); an empty list means none.
	SearchingClients []string `json:"searchingClients"`
	// MetaTools renames the meta-tools, for clients or agents that expect other names.
	MetaTools MetaToolNames `json:"metaTools"`
	// ResetTools offers the reset_tools meta-tool (off by default).
	ResetTools bool `json:"resetTools,omitempty"`
	// AutoGroups splits big groups into derived child groups.
	AutoGroups AutoGroupsConfig `json:"autoGroups"`
}

// DefaultAutoGroupSize is the target size of derived groups.
const DefaultAutoGroupSize = 12

// AutoGroupsConfig splits every group with more than Size tools of its
// own into derived child groups, named and described from the tools'
// names and descriptions, so an agent enables a short path of small
// groups instead of a whole server (see internal/autogroup).
type AutoGroupsConfig struct {
	// Enabled turns derivation on (the default) or off everywhere.
	Enabled bool `json:"enabled"`
	// Size is the target size of a group: 2 to 100, default 12.
	Size int `json:"size"`
}

// MetaToolNames are the wire names of the meta-tools (docs/design.md#meta-tools). Each defaults to
// its key.
type MetaToolNames struct {
	// EnableTools names enable_tools.
	EnableTools string `json:"enable_tools"`
	// DisableTools names disable_tools.
	DisableTools string `json:"disable_tools"`
	// ResetTools names reset_tools.
	ResetTools string `json:"reset_tools"`
	// FindTools names find_tools.
	FindTools string `json:"find_tools"`
	// DescribeTools names describe_tools.
	DescribeTools string `json:"describe_tools"`
	// CallTool names call_tool.
	CallTool string `json:"call_tool"`
	// Guidance names guidance.
	Guidance string `json:"guidance"`
}

// DefaultMetaToolNames returns the default names of the meta-tools.
func DefaultMetaToolNames() MetaToolNames {
	return MetaToolNames{
		EnableTools:   "enable_tools",
		DisableTools:  "disable_tools",
		ResetTools:    "reset_tools",
		FindTools:     "find_tools",
		DescribeTools: "describe_tools",
		CallTool:      "call_tool",
		Guidance:      "guidance",
	}
}

// ExpositionConfig is how tools are named and described on the wire.
type ExpositionConfig struct {
	// Default is the exposition of groups that do not set their own: flat (default)
	// or grouped.
	Default ExpositionStyle `json:"default"`
	// Separator joins prefix and tool name ("__"); it must itself be wire-safe.
	Separator string `json:"separator"`
	// AnnotateDescriptions adds [READ-ONLY] / [DESTRUCTIVE] to descriptions.
	// Default true.
	AnnotateDescriptions bool `json:"annotateDescriptions"`
}

// HTTPConfig is the streamable HTTP front.
type HTTPConfig struct {
	// Listen is the host:port to serve on when no --http flag is given; empty
	// means serve stdio. Bind to 127.0.0.1 unless you also set auth.
	Listen string `json:"listen,omitempty"`
	// Stateless serves without sessions (no per-client view; groups mode refused).
	Stateless bool `json:"stateless,omitempty"`
	// Auth, when it has tokens, requires "Authorization: Bearer <token>".
	Auth AuthConfig `json:"auth"`
	// AllowedOrigins are the Origin values accepted besides same-host ones
	// (DNS-rebinding protection), such as "https://app.example.com".
	AllowedOrigins []string `json:"allowedOrigins,omitempty"`
	// MaxSessions caps the sessions open at once over every MCP endpoint; a
	// client asking for one more is refused until one closes. Default 10000.
	MaxSessions int `json:"maxSessions"`
	// SessionIdleTimeout closes a session without a request for this long
	// ("30m"; a bare number is seconds). Default 30m.
	SessionIdleTimeout Duration `json:"sessionIdleTimeout"`
	// AllowUnauthenticated serves an address other machines can reach without
	// auth tokens. Without it, toolfold refuses to start so exposed.
	AllowUnauthenticated bool `json:"allowUnauthenticated,omitempty"`
}

// AuthConfig holds the bearer tokens HTTP clients may present.
type AuthConfig struct {
	// Tokens are the accepted bearer tokens, each possibly limited.
	Tokens []TokenConfig `json:"tokens,omitempty"`
	// OAuth, when set, also accepts access tokens from the named
	// authorization servers (toolfold is then an OAuth 2.1 resource
	// server, as the MCP authorization spec describes).
	OAuth *OAuthConfig `json:"oauth,omitempty"`
}

// Enabled reports whether requests must authenticate: static tokens or OAuth.
func (a AuthConfig) Enabled() bool { return len(a.Tokens) > 0 || a.OAuth != nil }

// OAuthConfig makes toolfold a resource server for access tokens issued by
// an identity provider. See internal/oauth.
type OAuthConfig struct {
	// Resource is toolfold's MCP URL as clients reach it, such as
	// "https://tools.example.com/mcp": the audience every token must carry
	// (RFC 8707) and the resource its metadata describes (RFC 9728).
	Resource string `json:"resource"`
	// Issuers are the authorization servers whose tokens are accepted, by
	// issuer URL. Their keys (JWKS) are found through their metadata.
	Issuers []string `json:"issuers"`
	// Audiences are accepted in "aud" besides Resource.
	Audiences []string `json:"audiences,omitempty"`
	// Scopes are advertised as scopes_supported in the resource metadata.
	Scopes []string `json:"scopes,omitempty"`
	// GroupsClaim names the claim listing the caller's groups at the
	// identity provider; "groups" when empty.
	GroupsClaim string `json:"groupsClaim,omitempty"`
	// ClockSkew is the tolerance on exp and nbf; zero allows none.
	ClockSkew Duration `json:"clockSkew,omitempty"`
	// JWKSRefresh is how often each issuer's keys are fetched again; one
	// hour when zero. A token signed by an unknown key fetches them at once,
	// at most once a minute per issuer.
	JWKSRefresh Duration `json:"jwksRefresh,omitempty"`
	// Introspection, when set, checks tokens that are not JWTs at the
	// issuer's introspection endpoint (RFC 7662).
	Introspection *IntrospectionConfig `json:"introspection,omitempty"`
	// Rules say what a caller may reach, from its token's claims. A caller
	// no rule matches is refused (403).
	Rules []OAuthRule `json:"rules"`
}

// IntrospectionConfig is how toolfold asks the issuer about opaque tokens.
type IntrospectionConfig struct {
	// Endpoint is the introspection URL; empty takes the issuer's
	// introspection_endpoint from its metadata (one issuer only).
	Endpoint string `json:"endpoint,omitempty"`
	// ClientID and ClientSecret authenticate toolfold to the endpoint,
	// usually "${VARIABLES}".
	ClientID     string `json:"clientId"`
	ClientSecret Secret `json:"clientSecret"`
}

// OAuthRule grants groups to the callers it matches: every condition set
// must hold (at least one must be set).
type OAuthRule struct {
	// Group matches a caller whose groups claim contains this value.
	Group string `json:"group,omitempty"`
	// Scope matches a caller whose token's scope contains this value.
	Scope string `json:"scope,omitempty"`
	// Sub matches the caller with this subject.
	Sub string `json:"sub,omitempty"`
	// Groups are the toolfold groups granted (with the groups inside them
	// and the ungrouped tools); "*" grants every group. Grants of all
	// matching rules add up.
	Groups []string `json:"groups"`
	// ReadOnly limits the caller to read-only tools: it restricts, so one
	// matching rule with readOnly makes the caller read-only everywhere.
	ReadOnly bool `json:"readOnly,omitempty"`
	// Admin opens the operator's routes (/api/*, the dashboard, /metrics)
	// to the callers the rule matches, as "admin" does for a static token;
	// they still see only what they reach.
	Admin bool `json:"admin,omitempty"`
}

// TokenConfig is one accepted bearer token.
type TokenConfig struct {
	// Token is the secret itself, usually "${SOME_VAR}". It prints as "***".
	Token Secret `json:"token"`
	// Groups limits the token to these groups (and ungrouped tools); empty means all.
	Groups []string `json:"groups,omitempty"`
	// ReadOnly limits the token to read-only tools.
	ReadOnly bool `json:"readOnly,omitempty"`
	// Admin lets the token see the operator's routes: /metrics, /api/* and
	// the dashboard (within its groups, if it has any). Other tokens reach
	// only /mcp, /mcp/<group> and /healthz.
	Admin bool `json:"admin,omitempty"`
}

// newDefaultConfig is the starting point the decoder fills from the file, so every
// absent key keeps its documented default.
func newDefaultConfig() *Config {
	return &Config{
		Disclosure: DisclosureConfig{
			Mode:       ModeAuto,
			Ungrouped:  UngroupedVisible,
			MetaTools:  DefaultMetaToolNames(),
			AutoGroups: AutoGroupsConfig{Enabled: true, Size: DefaultAutoGroupSize},
		},
		Exposition: ExpositionConfig{
			Default:              ExposeFlat,
			Separator:            DefaultSeparator,
			AnnotateDescriptions: true,
		},
		HTTP: HTTPConfig{
			MaxSessions:        DefaultMaxSessions,
			SessionIdleTimeout: Duration(DefaultSessionIdleTimeout),
		},
	}
}

// GroupNames returns every group the config knows without discovery: declared
// groups, every server's group and every command's group (disabled ones too, so
// references to them stay valid). Sorted.
func (c *Config) GroupNames() []string {
	set := c.staticGroups()
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// staticGroups is GroupNames as a set.
func (c *Config) staticGroups() map[string]bool {
	set := map[string]bool{}
	for name := range c.Groups {
		set[name] = true
	}
	for _, s := range c.MCPServers {
		if g, ok := s.EffectiveGroup(); ok {
			set[g] = true
		}
	}
	for name := range c.Commands {
		set[name] = true
	}
	return set
}

// Group returns the declared config of a group, or for an implicit group (a
// server's, a command's, or one met only in tools' _meta) a config with defaults:
// available, the default exposition, and a command's description.
func (c *Config) Group(name string) GroupConfig {
	g, ok := c.Groups[name]
	if !ok {
		g = GroupConfig{Name: name, Default: GroupAvailable, Exposition: c.Exposition.Default}
		g.Parent = impliedParent(name)
		if cmd, ok := c.Commands[name]; ok {
			g.Description = cmd.Description
		}
	}
	return g
}

// ParentOf returns a group's parent: its declared parent, else the part of a dotted
// name before the last dot, else "".
func (c *Config) ParentOf(name string) string {
	if g, ok := c.Groups[name]; ok && g.Parent != "" {
		return g.Parent
	}
	return impliedParent(name)
}

func impliedParent(name string) string {
	if i := strings.LastIndexByte(name, '.'); i > 0 {
		return name[:i]
	}
	return ""
}

var (
	// wireNamePattern is the rule for names on the wire (docs/design.md#expositions).
	wireNamePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	// groupNamePattern adds dots, which mean hierarchy.
	groupNamePattern = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)
	// envNamePattern is what ${VAR} accepts as VAR.
	envNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// wireSafe replaces every character a wire name may not hold with "_", so server
// keys such as "My Server" still yield valid default prefixes.
func wireSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9') {
			return r
		}
		return '_'
	}, s)
}
