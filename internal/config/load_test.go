package config

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func loadGood(t *testing.T, name string, env map[string]string) *Config {
	t.Helper()
	cfg, diags := Load(filepath.Join("testdata", "good", name), Options{LookupEnv: MapEnv(env)})
	if diags.HasErrors() {
		t.Fatalf("%s refused:\n%s", name, diags)
	}
	return cfg
}

// A Claude Desktop config, copied as users have it, loads with no change and no
// complaint, and keeps what the client would have run.
func TestClaudeDesktopConfigLoadsUnchanged(t *testing.T) {
	cfg, diags := Load("testdata/good/claude_desktop_config.json", Options{})
	if len(diags) != 0 {
		t.Fatalf("want no problems, got:\n%s", diags)
	}
	fs := cfg.MCPServers["filesystem"]
	if fs.Command != "npx" || !reflect.DeepEqual(fs.Args, []string{"-y", "@modelcontextprotocol/server-filesystem", "/Users/username/Desktop", "/Users/username/Downloads"}) {
		t.Errorf("filesystem = %+v", fs)
	}
	brave := cfg.MCPServers["brave-search"]
	if brave.Env["BRAVE_API_KEY"] != "YOUR_API_KEY_HERE" || brave.Transport != TransportStdio {
		t.Errorf("brave-search = %+v", brave)
	}
	if p := brave.EffectivePrefix(); p != "brave-search" {
		t.Errorf("default prefix = %q, want the key", p)
	}
	if g, ok := brave.EffectiveGroup(); !ok || g != "brave-search" {
		t.Errorf("default group = %q %v, want the key", g, ok)
	}
	if !brave.Lazy || brave.Timeout.Std() != DefaultServerTimeout {
		t.Errorf("defaults not applied: lazy=%v timeout=%v", brave.Lazy, brave.Timeout)
	}
	if cfg.Disclosure.Mode != ModeAuto || cfg.Exposition.Separator != "__" || !cfg.Exposition.AnnotateDescriptions {
		t.Errorf("top-level defaults not applied: %+v %+v", cfg.Disclosure, cfg.Exposition)
	}
	if got := cfg.GroupNames(); !reflect.DeepEqual(got, []string{"brave-search", "filesystem", "sqlite"}) {
		t.Errorf("GroupNames = %v", got)
	}
}

// Cursor's mcp.json: "type" keys, ${env:X} and ${userHome}, envFile, remote servers.
func TestCursorConfigLoadsUnchanged(t *testing.T) {
	cfg, diags := Load("testdata/good/cursor-mcp.json", Options{LookupEnv: MapEnv(map[string]string{"HOME": "/home/ann", "MY_API_KEY": "k"})})
	if len(diags) != 0 {
		t.Fatalf("want no problems, got:\n%s", diags)
	}
	want := map[string]Transport{"server-name": TransportStdio, "local-python": TransportStdio, "remote-server": TransportHTTP, "legacy-sse": TransportSSE, "streamable": TransportHTTP}
	for key, tr := range want {
		if got := cfg.MCPServers[key].Transport; got != tr {
			t.Errorf("%s transport = %q, want %q", key, got, tr)
		}
	}
	py := cfg.MCPServers["local-python"]
	if py.Args[0] != "/home/ann/mcp/server.py" {
		t.Errorf("${userHome} not expanded: %q", py.Args[0])
	}
	wantEnv := SecretMap{"API_KEY": "k", "DEBUG": "1", "REGION": "eu"} // env wins over envFile
	if !reflect.DeepEqual(py.Env, wantEnv) {
		t.Errorf("env = %v, want %v", map[string]string(py.Env), map[string]string(wantEnv))
	}
	if py.EnvFile != filepath.Join("testdata", "good", ".env.mcp") {
		t.Errorf("envFile not anchored at the config's directory: %q", py.EnvFile)
	}
	if h := cfg.MCPServers["remote-server"].Headers["API_KEY"]; h != "value" {
		t.Errorf("headers = %q", h)
	}
}

// The same config in JSON and YAML loads to the same value.
func TestJSONAndYAMLAreEquivalent(t *testing.T) {
	env := map[string]string{"GITHUB_TOKEN": "ghp_x"}
	fromJSON := loadGood(t, "equiv.json", env)
	fromYAML := loadGood(t, "equiv.yaml", env)
	for _, c := range []*Config{fromJSON, fromYAML} {
		c.File, c.positions = "", nil
	}
	if !reflect.DeepEqual(fromJSON, fromYAML) {
		j, _ := json.MarshalIndent(fromJSON, "", " ")
		y, _ := json.MarshalIndent(fromYAML, "", " ")
		t.Fatalf("JSON and YAML differ\njson: %s\nyaml: %s", j, y)
	}
	gh := fromJSON.MCPServers["github"]
	if gh.EffectivePrefix() != "" || gh.Prefix == nil {
		t.Errorf(`"prefix": "" must mean no prefix, got %v`, gh.Prefix)
	}
	if _, grouped := gh.EffectiveGroup(); grouped {
		t.Error(`"group": "" must leave the tools ungrouped`)
	}
	if gh.Lazy || gh.Timeout.Std() != 90*time.Second {
		t.Errorf("lazy=%v timeout=%v", gh.Lazy, gh.Timeout)
	}
	git := fromJSON.Commands["git"]
	if git.MaxOutput != 1<<20 || git.Timeout.Std() != DefaultCommandTimeout {
		t.Errorf("git maxOutput=%v timeout=%v", git.MaxOutput, git.Timeout)
	}
	var names []string
	for _, p := range git.Actions["log"].Params {
		names = append(names, p.Name+":"+string(p.Type))
	}
	if got := strings.Join(names, " "); got != "paths:array ref:string n:integer" {
		t.Errorf("params lost their order or implied types: %s", got)
	}
	if fromJSON.Disclosure.RefreshingClients == nil || len(fromJSON.Disclosure.RefreshingClients) != 0 {
		t.Errorf("an explicit empty refreshingClients must stay empty, got %#v", fromJSON.Disclosure.RefreshingClients)
	}
	mt := fromJSON.Disclosure.MetaTools
	if mt.EnableTools != "unfold" || mt.FindTools != "find_tools" {
		t.Errorf("metaTools = %+v", mt)
	}
	if g := fromJSON.Groups["code.repos"]; g.Exposition != ExposeGrouped || fromJSON.Group("code").Exposition != ExposeGrouped {
		t.Errorf("group exposition defaults wrong: %+v", g)
	}
	if fromJSON.ParentOf("code.repos") != "code" {
		t.Errorf("dotted name must imply its parent")
	}
}

// The design's example config (docs/design.md#config, with the commands
// of #command-line-programs) is valid.
func TestSpecExampleLoads(t *testing.T) {
	cfg := loadGood(t, "spec.jsonc", map[string]string{"GITHUB_TOKEN": "g", "T": "t", "T1": "t1", "PROJECT_DIR": "/src"})
	if cfg.Commands["git"].MaxOutput != 256*1024 || cfg.Commands["git"].Cwd != "/src" {
		t.Errorf("git = %+v", cfg.Commands["git"])
	}
	if got := cfg.MCPServers["docs"].Headers["Authorization"]; got != "Bearer t" {
		t.Errorf("header = %q", got)
	}
}

func TestExpand(t *testing.T) {
	env := MapEnv(map[string]string{"A": "alpha", "EMPTY": "", "NESTED": "${A}", "HOME": "/h"})
	for _, tc := range []struct {
		in, want, problem string
	}{
		{in: "plain", want: "plain"},
		{in: "${A}", want: "alpha"},
		{in: "x-${A}-y", want: "x-alpha-y"},
		{in: "${MISSING:-dflt}", want: "dflt"},
		{in: "${EMPTY:-dflt}", want: "dflt"},
		{in: "${EMPTY}", want: ""},
		{in: "${MISSING:-}", want: ""},
		{in: "${MISSING:-${A}}", want: "alpha"},
		{in: "${MISSING:-${ALSO:-deep}}", want: "deep"},
		{in: "${NESTED}", want: "${A}"}, // values are not re-expanded
		{in: "$${A}", want: "${A}"},
		{in: "$HOME and $1 and $$", want: "$HOME and $1 and $$"},
		{in: "${env:A}", want: "alpha"},
		{in: "${userHome}/x", want: "/h/x"},
		{in: "${MISSING}", problem: "environment variable MISSING is not set"},
		{in: "${A", problem: "without a closing }"},
		{in: "${}", problem: "is not a variable reference"},
		{in: "${A B}", problem: "is not a variable reference"},
	} {
		got, errs := expand(tc.in, env)
		if tc.problem != "" {
			if len(errs) != 1 || !strings.Contains(errs[0].msg, tc.problem) {
				t.Errorf("expand(%q) problems = %v, want one containing %q", tc.in, errs, tc.problem)
			}
			continue
		}
		if len(errs) != 0 || got != tc.want {
			t.Errorf("expand(%q) = %q, %v; want %q", tc.in, got, errs, tc.want)
		}
	}
}

// Expansion reaches strings at every depth (lists, maps, nested objects) and
// can feed booleans and numbers; map keys stay literal.
func TestExpansionEverywhere(t *testing.T) {
	src := `{
	  "mcpServers": {"${KEY}": {"command": "${CMD}", "args": ["a", "${ARG:-b}"], "env": {"${KEY}": "${VAL}"},
	                 "lazy": "${LAZY:-false}", "timeout": "${TIMEOUT:-5s}"}},
	  "groups": {"g": {"tools": ["${PRE}__*"]}},
	  "disclosure": {"maxTools": "${MAX}", "initialGroups": ["${GROUP}"]}
	}`
	env := MapEnv(map[string]string{"KEY": "k", "CMD": "run", "VAL": "v", "PRE": "p", "MAX": "7", "GROUP": "g"})
	cfg, diags := Parse("x.json", []byte(src), Options{LookupEnv: env})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	s, ok := cfg.MCPServers["${KEY}"]
	if !ok {
		t.Fatalf("map keys must stay literal; got %v", cfg.MCPServers)
	}
	if s.Command != "run" || s.Args[1] != "b" || s.Env["${KEY}"] != "v" || s.Lazy || s.Timeout.Std() != 5*time.Second {
		t.Errorf("server = %+v", s)
	}
	if cfg.Groups["g"].Tools[0] != "p__*" || cfg.Disclosure.MaxTools != 7 || cfg.Disclosure.InitialGroups[0] != "g" {
		t.Errorf("groups/disclosure not expanded: %+v %+v", cfg.Groups["g"], cfg.Disclosure)
	}
}

// Every value a ${VAR} reference took from the environment is recorded
// with the server whose entry read it (for redaction), wherever it went:
// a URL's path, a header, env, args. Defaults and literal text are not
// from the environment and are not recorded.
func TestExpandedValuesAreRecordedPerServer(t *testing.T) {
	src := `{
	  "mcpServers": {
	    "remote": {"url": "https://h.example/mcp/${PATH_KEY}/sse?${BARE_KEY}", "headers": {"X-Api": "${HEADER_KEY}"}},
	    "local": {"command": "run", "args": ["--token=${ARG_KEY}", "${MODE:-banner}"], "env": {"MODE": "production", "T": "${ENV_KEY}", "E": "${EMPTY:-x}"}},
	    "weird.name": {"command": "${CMD}"}
	  },
	  "groups": {"g": {"tools": ["${PRE}__*"]}}
	}`
	env := MapEnv(map[string]string{"PATH_KEY": "path-secret-1", "BARE_KEY": "bare-secret-2", "HEADER_KEY": "header-secret-3",
		"ARG_KEY": "arg-secret-4", "ENV_KEY": "env-secret-5", "EMPTY": "", "CMD": "runner", "PRE": "p"})
	cfg, diags := Parse("x.json", []byte(src), Options{LookupEnv: env})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	want := map[string]map[string]string{
		"remote":     {"PATH_KEY": "path-secret-1", "BARE_KEY": "bare-secret-2", "HEADER_KEY": "header-secret-3"},
		"local":      {"ARG_KEY": "arg-secret-4", "ENV_KEY": "env-secret-5"},
		"weird.name": {"CMD": "runner"},
	}
	for name, w := range want {
		if got := cfg.MCPServers[name].Expanded; !reflect.DeepEqual(map[string]string(got), w) {
			t.Errorf("%s: Expanded = %v, want %v", name, map[string]string(got), w)
		}
	}
	if s := fmt.Sprint(cfg.MCPServers["local"]); strings.Contains(s, "env-secret-5") {
		t.Errorf("printing a server shows an expanded value: %s", s)
	}
}

func TestNearestKey(t *testing.T) {
	keys := []string{"command", "args", "env", "cwd", "url", "headers", "transport", "prefix", "include", "exclude", "group", "lazy", "timeout", "disabled"}
	for _, tc := range []struct{ typo, want string }{
		{"inlcude", "include"},
		{"comand", "command"},
		{"Command", "command"},
		{"arg", "args"},
		{"timout", "timeout"},
		{"header", "headers"},
		{"transprot", "transport"},
		{"disable", "disabled"},
		{"foo", ""},
		{"environment", ""},
		{"x", ""},
	} {
		if got := nearest(tc.typo, keys); got != tc.want {
			t.Errorf("nearest(%q) = %q, want %q", tc.typo, got, tc.want)
		}
	}
	if got := nearest("mcpservers", []string{"mcpServers", "commands"}); got != "mcpServers" {
		t.Errorf("case-only slips must be found, got %q", got)
	}
}

func TestCycles(t *testing.T) {
	for _, tc := range []struct {
		name    string
		parents map[string]string
		want    []string
	}{
		{"none", map[string]string{"a": "", "b": "a", "c": "b"}, nil},
		{"two", map[string]string{"a": "b", "b": "a"}, []string{"a → b → a"}},
		{"three with a tail", map[string]string{"a": "c", "b": "a", "c": "b", "tail": "a"}, []string{"a → c → b → a"}},
		{"two separate", map[string]string{"a": "b", "b": "a", "x": "y", "y": "x"}, []string{"a → b → a", "x → y → x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := newDefaultConfig()
			cfg.MCPServers = map[string]ServerConfig{"s": {Name: "s", Command: "s"}}
			cfg.Groups = map[string]GroupConfig{}
			for g, p := range tc.parents {
				cfg.Groups[g] = GroupConfig{Name: g, Parent: p}
			}
			var got []string
			for _, p := range cfg.Validate() {
				if _, cycle, ok := strings.Cut(p.Message, "parents: "); ok {
					got = append(got, strings.Split(cycle, ";")[0])
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("cycles = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestResolveGroupStates(t *testing.T) {
	src := `{
	  "mcpServers": {"github": {"command": "gh"}, "docs": {"url": "https://example.com/mcp"}},
	  "groups": {
	    "issues": {"parent": "github", "default": "enabled"},
	    "code": {"default": "excluded"},
	    "code.repos": {},
	    "my-tools": {"default": "enabled"}
	  }
	}`
	cfg, diags := Parse("t.json", []byte(src), Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	for _, tc := range []struct {
		name     string
		env      map[string]string
		flags    Overrides
		want     map[string]GroupState
		problems []string
	}{
		{
			name: "config defaults, enabling flows up, exclusion flows down",
			want: map[string]GroupState{"github": GroupEnabled, "issues": GroupEnabled, "docs": GroupAvailable, "code": GroupExcluded, "code.repos": GroupExcluded, "my-tools": GroupEnabled},
		},
		{
			name: "environment beats config",
			env:  map[string]string{"MCP_GROUP_MY_TOOLS": "false", "MCP_GROUP_DOCS": "TRUE", "MCP_GROUP_ISSUES": "available", "MCP_GROUP_CODE": "available"},
			want: map[string]GroupState{"github": GroupAvailable, "issues": GroupAvailable, "docs": GroupEnabled, "code": GroupAvailable, "code.repos": GroupAvailable, "my-tools": GroupExcluded},
		},
		{
			name:  "flags beat environment",
			env:   map[string]string{"MCP_GROUP_DOCS": "true", "MCP_GROUP_CODE_REPOS": "false"},
			flags: Overrides{Enable: []string{"code", "code.repos"}, Exclude: []string{"docs"}},
			want:  map[string]GroupState{"github": GroupEnabled, "issues": GroupEnabled, "docs": GroupExcluded, "code": GroupEnabled, "code.repos": GroupEnabled, "my-tools": GroupEnabled},
		},
		{
			name:     "an excluded ancestor wins over an enabled child",
			flags:    Overrides{Enable: []string{"code.repos"}},
			want:     map[string]GroupState{"github": GroupEnabled, "issues": GroupEnabled, "docs": GroupAvailable, "code": GroupExcluded, "code.repos": GroupExcluded, "my-tools": GroupEnabled},
			problems: []string{`code.repos: warning: group "code.repos" is switched on but its ancestor "code" is excluded, so it is excluded too; enable "code" or stop excluding it`},
		},
		{
			name:  "bad values and unknown groups",
			env:   map[string]string{"MCP_GROUP_DOCS": "maybe"},
			flags: Overrides{Enable: []string{"isues", "docs"}, Exclude: []string{"docs", "nope"}},
			want:  map[string]GroupState{"github": GroupEnabled, "issues": GroupEnabled, "docs": GroupEnabled, "code": GroupExcluded, "code.repos": GroupExcluded, "my-tools": GroupEnabled},
			problems: []string{
				`environment: MCP_GROUP_DOCS: "maybe" is not a group switch; use true (enabled in every view), false (excluded) or available`,
				`command line: --groups: group "isues" does not exist; did you mean "issues"? Run "toolfold groups" to list the groups.`,
				`command line: --exclude-groups: group "docs" is given to both --groups and --exclude-groups; keep it in one`,
				`command line: --exclude-groups: group "nope" does not exist; run "toolfold groups" to list the groups.`,
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, diags := cfg.ResolveGroupStates(nil, tc.flags, MapEnv(tc.env))
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("states = %v\nwant     %v", got, tc.want)
			}
			var msgs []string
			for _, p := range diags {
				msgs = append(msgs, p.String())
			}
			if !reflect.DeepEqual(msgs, tc.problems) {
				t.Errorf("problems =\n%s\nwant\n%s", strings.Join(msgs, "\n"), strings.Join(tc.problems, "\n"))
			}
		})
	}
}

func TestGroupEnvVar(t *testing.T) {
	for in, want := range map[string]string{"issues": "MCP_GROUP_ISSUES", "my-tools": "MCP_GROUP_MY_TOOLS", "code.repos": "MCP_GROUP_CODE_REPOS"} {
		if got := GroupEnvVar(in); got != want {
			t.Errorf("GroupEnvVar(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFind(t *testing.T) {
	dir := t.TempDir()
	write := func(name string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	noEnv := MapEnv(nil)
	if _, found, err := Find("", noEnv, dir); found || err != nil {
		t.Fatalf("empty dir: found=%v err=%v, want the demo (not found, no error)", found, err)
	}
	write("toolfold.yml")
	if p, _, _ := Find("", noEnv, dir); filepath.Base(p) != "toolfold.yml" {
		t.Errorf("got %q, want toolfold.yml", p)
	}
	write("toolfold.yaml")
	write("toolfold.json")
	if p, _, _ := Find("", noEnv, dir); filepath.Base(p) != "toolfold.json" {
		t.Errorf("got %q, want toolfold.json first", p)
	}
	write("other.yaml")
	if p, found, err := Find("", MapEnv(map[string]string{"TOOLFOLD_CONFIG": "other.yaml"}), dir); p != "other.yaml" || !found || err != nil {
		t.Errorf("$TOOLFOLD_CONFIG: %q %v %v", p, found, err)
	}
	if p, found, err := Find("toolfold.yaml", MapEnv(map[string]string{"TOOLFOLD_CONFIG": "other.yaml"}), dir); p != "toolfold.yaml" || !found || err != nil {
		t.Errorf("--config must win: %q %v %v", p, found, err)
	}
	if _, found, err := Find("typo.json", noEnv, dir); found || err == nil || !strings.Contains(err.Error(), `"typo.json" given by --config does not exist`) {
		t.Errorf("a missing --config file must be an error, got found=%v err=%v", found, err)
	}
	if _, _, err := Find("", MapEnv(map[string]string{"TOOLFOLD_CONFIG": "gone.json"}), dir); err == nil || !os.IsNotExist(unwrapAll(err)) {
		t.Errorf("a missing $TOOLFOLD_CONFIG file must be an error wrapping fs.ErrNotExist, got %v", err)
	}
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok || u.Unwrap() == nil {
			return err
		}
		err = u.Unwrap()
	}
}

func TestUnits(t *testing.T) {
	for in, want := range map[string]ByteSize{"256KiB": 256 << 10, "1MB": 1_000_000, "1mib": 1 << 20, "4096": 4096, "1.5K": 1536, "2 GiB": 2 << 30, "10b": 10} {
		if got, err := parseByteSize(in); err != nil || got != want {
			t.Errorf("parseByteSize(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "KiB", "1XB", "-1", "1e400"} {
		if _, err := parseByteSize(bad); err == nil {
			t.Errorf("parseByteSize(%q) accepted", bad)
		}
	}
	for in, want := range map[string]time.Duration{"60s": time.Minute, "1m30s": 90 * time.Second, "90": 90 * time.Second, "0.5": 500 * time.Millisecond} {
		if got, err := parseDuration(in); err != nil || got.Std() != want {
			t.Errorf("parseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if ByteSize(256<<10).String() != "256KiB" || ByteSize(1000).String() != "1000" {
		t.Error("ByteSize.String")
	}
}

// No secret leaks through fmt, %#v, slog or the redacted copy.
func TestSecretsDoNotLeak(t *testing.T) {
	const secret = "ghp_s3cr3t"
	src := fmt.Sprintf(`{"mcpServers": {
	  "gh": {"command": "npx", "env": {"TOKEN": %[1]q}},
	  "docs": {"url": "https://user:%[1]s@example.com/mcp?key=%[1]s", "headers": {"Authorization": "Bearer %[1]s"}},
	  "pathy": {"url": "https://example.com/mcp/${PATH_KEY}/sse"},
	  "argy": {"command": "run", "args": ["--token=${ARG_KEY}"]}},
	  "http": {"auth": {"tokens": [{"token": %[1]q}], "oauth": {"resource": "https://t.example.com/mcp", "issuers": ["https://login.example.com"],
	    "introspection": {"clientId": "toolfold", "clientSecret": %[1]q}, "rules": [{"sub": "ops", "groups": ["*"]}]}}}}`, secret)
	cfg, diags := Parse("s.json", []byte(src), Options{LookupEnv: MapEnv(map[string]string{"PATH_KEY": secret, "ARG_KEY": secret})})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	red := cfg.Redacted()
	j, err := json.Marshal(red)
	if err != nil {
		t.Fatal(err)
	}
	var logged strings.Builder
	slog.New(slog.NewTextHandler(&logged, nil)).Info("cfg", "env", cfg.MCPServers["gh"].Env, "headers", cfg.MCPServers["docs"].Headers, "token", cfg.HTTP.Auth.Tokens[0].Token)
	for what, text := range map[string]string{
		"redacted JSON": string(j),
		"%v":            fmt.Sprintf("%v %v %v", cfg.MCPServers["gh"].Env, cfg.MCPServers["docs"].Headers, cfg.HTTP.Auth.Tokens[0].Token),
		"%#v":           fmt.Sprintf("%#v %#v", cfg.MCPServers["gh"].Env, cfg.HTTP.Auth.Tokens[0].Token),
		"slog":          logged.String(),
	} {
		if strings.Contains(text, secret) {
			t.Errorf("%s leaks the secret: %s", what, text)
		}
	}
	if !strings.Contains(string(j), "Bearer ***") {
		t.Errorf("redacted headers should keep the scheme: %s", j)
	}
	if cfg.MCPServers["gh"].Env["TOKEN"] != secret || string(cfg.HTTP.Auth.Tokens[0].Token) != secret || string(cfg.HTTP.Auth.OAuth.Introspection.ClientSecret) != secret {
		t.Error("Redacted must not modify the original config")
	}
}

// Problems found after discovery read like the loader's own.
func TestProblemfAndGlobs(t *testing.T) {
	src := "{\n\"mcpServers\": {\"gh\": {\"command\": \"x\",\n \"include\": [\"*issue*\"]}},\n\"groups\": {\"g\": {\"prefixes\": [\"gh__is*\"]}}\n}"
	cfg, diags := Parse("toolfold.json", []byte(src), Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	globs := cfg.Globs()
	want := []Glob{
		{Path: "mcpServers.gh.include[0]", Pattern: "*issue*", Owner: "gh", Over: "server tools"},
		{Path: "groups.g.prefixes[0]", Pattern: `gh__is\**`, Owner: "g", Over: "namespaced tools"},
	}
	if !reflect.DeepEqual(globs, want) {
		t.Errorf("Globs = %+v", globs)
	}
	if !MatchGlob(globs[1].Pattern, "gh__is*x") || MatchGlob(globs[1].Pattern, "gh__isx") {
		t.Error("a prefix must match literally")
	}
	p := cfg.Problemf(SeverityWarning, globs[0].Path, "%q matches no tool of server %q", globs[0].Pattern, globs[0].Owner)
	if got := p.String(); got != `toolfold.json:3: mcpServers.gh.include[0]: warning: "*issue*" matches no tool of server "gh"` {
		t.Errorf("Problemf = %s", got)
	}
}

func TestLoadMissingFile(t *testing.T) {
	cfg, diags := Load("testdata/nope.json", Options{})
	if cfg != nil || diags.String() != "testdata/nope.json: the config file does not exist; check the path given with --config or $TOOLFOLD_CONFIG" {
		t.Errorf("got %v %q", cfg, diags)
	}
	if err := diags.Err(); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("Err() = %v", err)
	}
}

// A server's idleTimeout overrides serverDefaults.idleTimeout; 0, "never" and
// "off" switch it off; after loading every stdio server carries the value
// that applies to it, and remote servers none.
func TestIdleTimeout(t *testing.T) {
	src := `{
	  "serverDefaults": {"idleTimeout": "10m"},
	  "mcpServers": {
	    "inherits": {"command": "a"},
	    "own":      {"command": "b", "idleTimeout": "90s"},
	    "seconds":  {"command": "c", "idleTimeout": 45},
	    "zero":     {"command": "d", "idleTimeout": 0},
	    "never":    {"command": "e", "idleTimeout": "never"},
	    "off":      {"command": "f", "idleTimeout": "OFF"},
	    "null":     {"command": "g", "idleTimeout": null},
	    "remote":   {"url": "https://example.com/mcp"}
	  }}`
	cfg, diags := Parse("idle.json", []byte(src), Options{})
	if len(diags) != 0 {
		t.Fatal(diags)
	}
	want := map[string]time.Duration{
		"inherits": 10 * time.Minute, "own": 90 * time.Second, "seconds": 45 * time.Second,
		"zero": 0, "never": 0, "off": 0, "null": 10 * time.Minute,
	}
	for name, w := range want {
		got := cfg.MCPServers[name].IdleTimeout
		if got == nil || got.Std() != w {
			t.Errorf("%s: idleTimeout = %v, want %v", name, got, w)
		}
	}
	if got := cfg.MCPServers["remote"].IdleTimeout; got != nil {
		t.Errorf("remote: idleTimeout = %v, want none", got)
	}

	// Off by default.
	cfg, diags = Parse("plain.json", []byte(`{"mcpServers": {"a": {"command": "a"}}}`), Options{})
	if len(diags) != 0 {
		t.Fatal(diags)
	}
	if got := cfg.MCPServers["a"].IdleTimeout; got == nil || got.Std() != 0 || got.String() != "never" {
		t.Errorf("without the key: idleTimeout = %v, want never", got)
	}
}

// A server's startTimeout overrides serverDefaults.startTimeout, which
// defaults to DefaultStartTimeout; zero and negative values are refused.
func TestStartTimeout(t *testing.T) {
	cases := []struct {
		name, src string
		want      map[string]time.Duration
		problem   string
	}{
		{name: "defaults", src: `{"mcpServers": {"a": {"command": "a"}, "r": {"url": "https://example.com/mcp"}}}`,
			want: map[string]time.Duration{"a": DefaultStartTimeout, "r": DefaultStartTimeout}},
		{name: "serverDefaults and own", src: `{"serverDefaults": {"startTimeout": "2m"},
			"mcpServers": {"inherits": {"command": "a"}, "own": {"command": "b", "startTimeout": 5}}}`,
			want: map[string]time.Duration{"inherits": 2 * time.Minute, "own": 5 * time.Second}},
		{name: "zero", src: `{"mcpServers": {"a": {"command": "a", "startTimeout": "0s"}}}`, problem: "startTimeout"},
		{name: "not a duration", src: `{"serverDefaults": {"startTimeout": "soon"}, "mcpServers": {"a": {"command": "a"}}}`, problem: "startTimeout"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, diags := Parse("start.json", []byte(tc.src), Options{})
			if tc.problem != "" {
				if !diags.HasErrors() || !strings.Contains(diags.String(), tc.problem) {
					t.Fatalf("diagnostics = %q, want an error about %s", diags.String(), tc.problem)
				}
				return
			}
			if len(diags) != 0 {
				t.Fatal(diags)
			}
			for name, w := range tc.want {
				if got := cfg.MCPServers[name].EffectiveStartTimeout(); got != w {
					t.Errorf("%s: start timeout = %v, want %v", name, got, w)
				}
			}
		})
	}
}

// maxMessageBytes and maxTools bound what one server can make toolfold
// hold; absent, the defaults apply; a negative maxTools is refused.
func TestServerBounds(t *testing.T) {
	src := `{"mcpServers": {"plain": {"command": "a"}, "big": {"command": "b", "maxMessageBytes": "64MiB", "maxTools": 20000}}}`
	cfg, diags := Parse("bounds.json", []byte(src), Options{})
	if len(diags) != 0 {
		t.Fatal(diags)
	}
	plain, big := cfg.MCPServers["plain"], cfg.MCPServers["big"]
	if plain.EffectiveMaxMessageBytes() != DefaultMaxMessageBytes || plain.EffectiveMaxTools() != DefaultMaxTools {
		t.Errorf("defaults: %v, %d", plain.EffectiveMaxMessageBytes(), plain.EffectiveMaxTools())
	}
	if big.EffectiveMaxMessageBytes() != 64<<20 || big.EffectiveMaxTools() != 20000 {
		t.Errorf("set: %v, %d", big.EffectiveMaxMessageBytes(), big.EffectiveMaxTools())
	}
	_, diags = Parse("bounds.json", []byte(`{"mcpServers": {"a": {"command": "a", "maxTools": -1}}}`), Options{})
	if !diags.HasErrors() || !strings.Contains(diags.String(), "maxTools") {
		t.Errorf("a negative maxTools must be refused: %q", diags.String())
	}
}

// TestOptionalServerWithUnsetVariableIsLeftOut: one server's missing
// secret must not take the whole config down when the user said the server
// is optional; the rest loads, that server is disabled, and a warning says
// why.
func TestOptionalServerWithUnsetVariableIsLeftOut(t *testing.T) {
	src := `{"mcpServers": {
		"github": {"command": "npx", "env": {"TOKEN": "${GITHUB_TOKEN}"}, "optional": true},
		"memory": {"command": "npx", "optional": true}}}`
	cfg, diags := Parse("toolfold.json", []byte(src), Options{LookupEnv: MapEnv(nil)})
	if diags.HasErrors() {
		t.Fatalf("an optional server's unset variable must not refuse the config:\n%s", diags)
	}
	if !cfg.MCPServers["github"].Disabled || cfg.MCPServers["memory"].Disabled {
		t.Errorf("github must be left out and memory kept: %+v", cfg.MCPServers)
	}
	if w := diags.Warnings().String(); !strings.Contains(w, "GITHUB_TOKEN is not set") || !strings.Contains(w, `server "github" is optional, so it is left out`) {
		t.Errorf("the warning does not say what happened: %s", w)
	}
	_, diags = Parse("toolfold.json", []byte(`{"mcpServers": {"github": {"command": "npx", "env": {"TOKEN": "${GITHUB_TOKEN}"}}}}`), Options{LookupEnv: MapEnv(nil)})
	if !diags.HasErrors() || !strings.Contains(diags.String(), `mark the server "optional": true`) {
		t.Errorf("without optional the config is refused, saying how to make it optional: %s", diags)
	}
}
