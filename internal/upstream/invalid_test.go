package upstream

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/rawcall"
)

// A stdio server's answer that is not valid JSON fails its call at once,
// on the typed path and on the fast path, with an error that says so;
// the server keeps serving on the same process. Before, the line was
// skipped as if it were a banner and the call waited out its timeout.
func TestInvalidAnswerFailsItsCallAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	fx := fixture(t, "bulk", nil)
	// Far longer than the test may take: a call that waits for it has
	// not been answered at once, and its error says "did not answer".
	fx.Timeout = config.Duration(10 * time.Minute)
	m := newTestManager(t, map[string]config.ServerConfig{"fx": fx}, &Options{ProtocolVersion: "2025-11-25"})
	pid := mustCall(t, m, "fx", "pid", nil)
	const want = `upstream "fx" answered tools/call "%s" with a message that is not valid JSON`

	for _, tool := range []string{"broken-inner", "broken-cut", "broken-idlast"} {
		t.Run(tool, func(t *testing.T) {
			msg := strings.Replace(want, "%s", tool, 1)
			_, err := call(t, m, "fx", tool, nil)
			if !errors.Is(err, ErrInvalidAnswer) || !strings.HasPrefix(errorOf(err), msg) {
				t.Errorf("typed path: got  %v\nwant %s", err, msg)
			}
			out, _ := forwardRaw(t, m, "fx", tool, `{}`, rawcall.Capabilities{}, nil)
			o := <-out
			if !errors.Is(o.err, ErrInvalidAnswer) || !strings.HasPrefix(errorOf(o.err), msg) {
				t.Errorf("fast path: got  %v (result %q)\nwant %s", o.err, o.result, msg)
			}
			if got := mustCall(t, m, "fx", "pid", nil); got != pid {
				t.Errorf("the server was restarted (pid %s, then %s): the connection must carry on", pid, got)
			}
		})
	}
}

// brokenAnswer answers for a broken line only when the id it read is the
// answer's: the top-level one, or the line's only "id" member.
func TestBrokenAnswerReadsOnlyAnAnswersID(t *testing.T) {
	for _, tc := range []struct {
		line string
		id   string // "" when the line is to be skipped
	}{
		{`{"jsonrpc":"2.0","id":7,"result":{"content":[nope}]}}`, "7"},
		{`{"jsonrpc":"2.0","id":"a-1","result":{"content":[{"text":"cut`, `"a-1"`},
		{`{"jsonrpc":"2.0","result":{"content":[nope}]},"id":12}`, "12"},
		{`{"jsonrpc":"2.0","result":{"items":[{"id":1},nope}]},"id":12}`, ""}, // two ids: whose?
		{`{"jsonrpc":"2.0","id":3,"method":"sampling/createMessage","params":{nope}`, ""},
		{`{'level': 'info', 'id': 4}`, ""},
		{`{"msg":"started"`, ""},
		{`{"jsonrpc":"2.0","id":null,"error":{nope}`, ""},
	} {
		rep, answered := (*rawConn)(nil).brokenAnswer([]byte(tc.line))
		if answered != (tc.id != "") {
			t.Errorf("%s: answered %v, want %v", tc.line, answered, tc.id != "")
			continue
		}
		if tc.id != "" && string(rep) != string(invalidAnswerResponse([]byte(tc.id))) {
			t.Errorf("%s: replacement %s, want the error response to id %s", tc.line, rep, tc.id)
		}
	}
}
