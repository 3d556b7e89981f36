package gateway_test

import (
	"encoding/json"
	"log/slog"
	"regexp"
	"strings"
	"testing"

	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/gateway"
	"github.com/toolfold/toolfold/internal/logtest"
)

// findAnswer serves one find_tools call (args as sent, _meta members
// after them) over stdio to a gateway of four tools in mode, to a client
// that initialized with version ("": a 2026-07-28 client), and returns the
// answer the client read and the audit lines, their times left out.
func findAnswer(t *testing.T, mode expose.Mode, version, args, meta string, noBytes bool) (answer, audit string) {
	t.Helper()
	return metaAnswer(t, "find_tools", mode, version, args, meta, noBytes)
}

// metaAnswer is findAnswer for the meta-tool named tool.
func metaAnswer(t *testing.T, tool string, mode expose.Mode, version, args, meta string, noBytes bool) (answer, audit string) {
	t.Helper()
	var tools []*catalog.Tool
	for _, id := range []string{"create_issue", "list_issues", "send_message", "read_file"} {
		tl := catalogtest.Tool(id)
		tl.Def.Description = "Does " + strings.ReplaceAll(id, "_", " ") + " <for> the user & more."
		tools = append(tools, tl)
	}
	logs := &logtest.Buffer{}
	g := specGateway(t, catalog.Spec{Tools: tools}, &gateway.Options{Mode: mode, NoByteForwarding: noBytes, Logger: logs.Logger(slog.LevelInfo)})
	w := serveWire(t, g)
	if version != "" {
		w.initialize(version)
	} else {
		w.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{%s}}`, statelessMeta)
		w.recv()
	}
	w.send(`{"jsonrpc":"2.0","id":"f-7","method":"tools/call","params":{"name":%q,"arguments":%s%s}}`, tool, args, meta)
	answer = w.recv()
	w.close()
	lines := strings.Join(auditLines(logs.String()), "\n")
	return answer, regexp.MustCompile(`(time|took)=\S+ ?`).ReplaceAllString(lines, "")
}

// TestFindToolsTypedAndBytePathsAlike: find_tools answered on the stdio
// byte path reads byte for byte as the typed path's answer, errors and
// notes included, and is audited alike but for its path; a call the byte
// path cannot carry exactly (more in _meta, a mode without find_tools)
// goes the typed way.
func TestFindToolsTypedAndBytePathsAlike(t *testing.T) {
	const session, stateless = "2025-11-25", ""
	cases := []struct {
		name, mode, version, args, meta string
		path                            string // the path the call takes with byte forwarding on
	}{
		{"session", "search", session, `{"query":"create issue"}`, ``, "stdio-bytes"},
		{"2026-07-28", "search", stateless, `{"query":"create issue"}`, `,` + statelessMeta, "stdio-bytes"},
		{"several phrasings", "search", stateless, `{"query":"open a bug","queries":["file issue"],"limit":2}`, `,` + statelessMeta, "stdio-bytes"},
		{"nothing found", "search", session, `{"query":"zebra"}`, ``, "stdio-bytes"},
		{"no arguments", "search", session, `null`, ``, "stdio-bytes"},
		{"a wrong argument", "search", stateless, `{"query":7}`, `,` + statelessMeta, "stdio-bytes"},
		{"an unknown argument", "search", session, `{"query":"read file","depth":2}`, ``, "stdio-bytes"},
		{"an unknown group", "search", session, `{"query":"read file","group":"nope"}`, ``, "stdio-bytes"},
		{"groups mode", "groups", session, `{"query":"create issue"}`, ``, "stdio-bytes"},
		{"groups mode, 2026-07-28", "groups", stateless, `{"query":"list issues"}`, `,` + statelessMeta, "stdio-bytes"},
		{"a progress token", "search", session, `{"query":"send message"}`, `,"_meta":{"progressToken":3}`, "typed"},
		{"not offered", "flat", session, `{"query":"send message"}`, ``, "typed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			typed, typedAudit := findAnswer(t, expose.Mode(c.mode), c.version, c.args, c.meta, true)
			bytePath, byteAudit := findAnswer(t, expose.Mode(c.mode), c.version, c.args, c.meta, false)
			if typed != bytePath {
				t.Errorf("the paths differ:\ntyped: %s\nbytes: %s", typed, bytePath)
			}
			if strings.Count(typedAudit, "\n") != 0 || strings.Count(byteAudit, "\n") != 0 {
				t.Fatalf("one call, audit lines:\ntyped: %s\nbytes: %s", typedAudit, byteAudit)
			}
			if !strings.Contains(typedAudit, "path=typed") || !strings.Contains(byteAudit, "path="+c.path) {
				t.Errorf("audit lines:\ntyped: %s\nbytes: %s\nwant path=typed, then path=%s", typedAudit, byteAudit, c.path)
			}
			if strings.Replace(byteAudit, "path="+c.path, "path=typed", 1) != typedAudit {
				t.Errorf("the audit lines differ but for the path:\ntyped: %s\nbytes: %s", typedAudit, byteAudit)
			}
			if !strings.Contains(typed, `"id":"f-7","result":{`) || !strings.Contains(typed, `"content":[{"type":"text"`) {
				t.Errorf("answer %s; want a tool result", typed)
			}
		})
	}
}

// FuzzFindToolsPathsAgree sends the same find_tools arguments down the
// typed path and the stdio byte path, to a session client and a 2026-07-28
// one, and requires the same answer byte for byte: whatever the arguments
// say, the byte path reads them as the typed path does or leaves them to it.
func FuzzFindToolsPathsAgree(f *testing.F) {
	fuzzMetaPathsAgree(f, "find_tools", `{"query":"create issue"}`, `{"query":"x","limit":-3}`, `{"query":"a","queries":"b"}`,
		`{"query":"a","queries":["b","c","d"]}`, `{"query":"\u003cb\u003e","group":""}`, `{}`, `[]`, `"q"`, `{"query":null}`, `{"limit":1e400}`)
}

// fuzzMetaPathsAgree sends the same arguments of the meta-tool named tool
// down the typed path and the stdio byte path, to a session client and a
// 2026-07-28 one, and requires the same answer byte for byte.
func fuzzMetaPathsAgree(f *testing.F, tool string, seeds ...string) {
	for _, args := range seeds {
		f.Add(args, false)
		f.Add(args, true)
	}
	f.Fuzz(func(t *testing.T, args string, stateless bool) {
		if !json.Valid([]byte(args)) {
			return // the framing's concern (FuzzCheckFrame)
		}
		version, meta := "2025-11-25", ""
		if stateless {
			version, meta = "", ","+statelessMeta
		}
		typed, _ := metaAnswer(t, tool, expose.Search, version, args, meta, true)
		bytePath, _ := metaAnswer(t, tool, expose.Search, version, args, meta, false)
		if typed != bytePath {
			t.Errorf("the paths disagree on arguments %s:\ntyped: %s\nbytes: %s", args, typed, bytePath)
		}
	})
}

// TestDescribeToolsTypedAndBytePathsAlike: describe_tools answered on the
// stdio byte path reads byte for byte as the typed path's answer, unknown
// names, errors and notes included, and is audited alike but for its
// path; where the session does not offer it, the typed path answers.
func TestDescribeToolsTypedAndBytePathsAlike(t *testing.T) {
	const session, stateless = "2025-11-25", ""
	cases := []struct {
		name, mode, version, args, meta string
		path                            string // the path the call takes with byte forwarding on
	}{
		{"session", "search", session, `{"names":["create_issue","read_file"]}`, ``, "stdio-bytes"},
		{"2026-07-28", "search", stateless, `{"names":["send_message"]}`, `,` + statelessMeta, "stdio-bytes"},
		{"an unknown name", "search", session, `{"names":["create_isue"]}`, ``, "stdio-bytes"},
		{"no names", "search", stateless, `{"names":[]}`, `,` + statelessMeta, "stdio-bytes"},
		{"no arguments", "search", session, `null`, ``, "stdio-bytes"},
		{"a wrong argument", "search", session, `{"names":"read_file"}`, ``, "stdio-bytes"},
		{"an unknown argument", "search", stateless, `{"names":["read_file"],"full":true}`, `,` + statelessMeta, "stdio-bytes"},
		{"a progress token", "search", session, `{"names":["read_file"]}`, `,"_meta":{"progressToken":3}`, "typed"},
		{"not offered", "flat", session, `{"names":["read_file"]}`, ``, "typed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			typed, typedAudit := metaAnswer(t, "describe_tools", expose.Mode(c.mode), c.version, c.args, c.meta, true)
			bytePath, byteAudit := metaAnswer(t, "describe_tools", expose.Mode(c.mode), c.version, c.args, c.meta, false)
			if typed != bytePath {
				t.Errorf("the paths differ:\ntyped: %s\nbytes: %s", typed, bytePath)
			}
			if !strings.Contains(typedAudit, "path=typed") || !strings.Contains(byteAudit, "path="+c.path) {
				t.Errorf("audit lines:\ntyped: %s\nbytes: %s\nwant path=typed, then path=%s", typedAudit, byteAudit, c.path)
			}
			if strings.Replace(byteAudit, "path="+c.path, "path=typed", 1) != typedAudit {
				t.Errorf("the audit lines differ but for the path:\ntyped: %s\nbytes: %s", typedAudit, byteAudit)
			}
			if !strings.Contains(typed, `"id":"f-7","result":{`) {
				t.Errorf("answer %s; want a tool result", typed)
			}
		})
	}
	// The control: the definitions are in the answer, escaped alike.
	if got, _ := metaAnswer(t, "describe_tools", expose.Search, session, `{"names":["read_file"]}`, ``, false); !strings.Contains(got, `read file \u003cfor\u003e the user \u0026 more`) {
		t.Errorf("describe_tools on the byte path: %s; want read_file's description", got)
	}
}

// FuzzDescribeToolsPathsAgree is FuzzFindToolsPathsAgree for
// describe_tools.
func FuzzDescribeToolsPathsAgree(f *testing.F) {
	fuzzMetaPathsAgree(f, "describe_tools", `{"names":["read_file"]}`, `{"names":["x","read_file","read_file"]}`, `{"names":"a"}`,
		`{"names":[null,1]}`, `{"names":["\u003cb\u003e"]}`, `{}`, `[]`, `"q"`, `{"names":null}`)
}

// TestFindToolsBytePathPanicFailsTheCallAlone: a panic while the byte path
// answers find_tools fails that call with an internal error; the next call
// is answered, and the session stays up.
func TestFindToolsBytePathPanicFailsTheCallAlone(t *testing.T) {
	g := specGateway(t, catalog.Spec{Tools: []*catalog.Tool{catalogtest.Tool("create_issue")}}, &gateway.Options{Mode: expose.Search})
	gateway.PanicOnceAt(g, "stdio-bytes", "tools/call")
	w := serveWire(t, g)
	w.initialize("2025-11-25")
	call := `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"find_tools","arguments":{"query":"create issue"}}}`
	w.send(call, 5)
	if got := w.recv(); !strings.Contains(got, `"id":5,"error":{"code":-32603`) {
		t.Errorf("the call that panicked: %s; want -32603", got)
	}
	w.send(call, 6)
	if got := w.recv(); !strings.Contains(got, `"id":6,"result"`) || !strings.Contains(got, "create_issue") {
		t.Errorf("the next call: %s", got)
	}
}
