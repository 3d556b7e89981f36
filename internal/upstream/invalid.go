package upstream

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/toolfold/toolfold/internal/rawcall"
)

// A stdio server's answer that is not valid JSON ("result":{"content":[nope}],
// a line cut short) fails the request it answered at once, as an oversized
// one does (limit.go): the line is scanned for its id, the fast-path call
// of that id is failed, and the SDK's request of that id reads an error
// response in its place, marked by codeInvalidAnswer and its data, which
// requestError and startError word for the reader. The connection carries
// on with the next line.
//
// The id is read by idScan, which follows the message's nesting; when the
// broken part unbalances the nesting before the id (the TypeScript SDK
// writes "id" last), a tolerant scan takes the one "id" member of the
// line, if there is exactly one. A line whose id cannot be read that way
// is skipped with a warning, as a banner is, and the calls in flight wait
// for their answers or their timeout: failing them all would fail calls
// the server is still answering properly, for a line that may be no
// answer at all (servers print log lines such as {'level': 'info'}), and
// the timeout already bounds the one call it may have been.

// codeInvalidAnswer is the code of the error response put in place of an
// answer that is not valid JSON. A server may use the same code, so the
// error's data marks it too (invalidAnswerKey).
const codeInvalidAnswer = -32098

// invalidAnswerKey is the member of the error's data that marks it as
// toolfold's.
const invalidAnswerKey = "toolfold.invalidJSON"

// invalidAnswerResponse is the error response that takes the place of an
// answer with the given id (raw JSON) that is not valid JSON, newline
// included.
func invalidAnswerResponse(id []byte) []byte {
	b := []byte(`{"jsonrpc":"2.0","id":`)
	b = append(b, id...)
	b = append(b, `,"error":{"code":`...)
	b = strconv.AppendInt(b, codeInvalidAnswer, 10)
	b = append(b, `,"message":"the answer was not valid JSON","data":{"`...)
	b = append(b, invalidAnswerKey...)
	return append(b, `":true}}}`+"\n"...)
}

// isInvalidAnswer reports whether e is the error put in place of an answer
// that was not valid JSON.
func isInvalidAnswer(e *jsonrpc.Error) bool {
	if e == nil || e.Code != codeInvalidAnswer {
		return false
	}
	var data map[string]json.RawMessage
	if json.Unmarshal(e.Data, &data) != nil {
		return false
	}
	_, ok := data[invalidAnswerKey]
	return ok
}

// invalidAnswerError explains a request whose answer was not valid JSON.
func (s *server) invalidAnswerError(what string, cause error) error {
	return s.errorf(ErrInvalidAnswer, cause, "upstream %q answered %s with a message that is not valid JSON; the request failed, and the server keeps serving", s.name, what)
}

// brokenAnswer handles a whole line of the server's that starts like a
// JSON object and is not valid JSON. It returns what the SDK reads in its
// place (an error response to its request) and whether the line was an
// answer whose id could be read; when it was not, the line is skipped as
// any other stray line is.
func (r *rawConn) brokenAnswer(line []byte) (replacement []byte, answered bool) {
	scan := &idScan{}
	scan.feed(line)
	id := scan.ID()
	if id == nil && !scan.method {
		id = loneID(line)
	}
	if id == nil || scan.method {
		// No id to answer to, or the server's own request or
		// notification: nothing waits for it here.
		return nil, false
	}
	if key, ok := rawcall.String(id); ok && strings.HasPrefix(key, rawIDPrefix) {
		if r != nil {
			r.fail(key, func(p *rawPending) error { return p.c.s.invalidAnswerError(p.what(), nil) })
		}
		return nil, true
	}
	return invalidAnswerResponse(id), true
}

// loneID is the value of the one "id" member of a broken line, when the
// line has exactly one and its value is a number or a short string
// without escapes; nil otherwise. It does not follow the nesting, which
// the broken part may have thrown off.
func loneID(line []byte) []byte {
	const key = `"id"`
	i := bytes.Index(line, []byte(key))
	if i < 0 || bytes.Contains(line[i+len(key):], []byte(key)) {
		return nil
	}
	rest := bytes.TrimLeft(line[i+len(key):], blanks)
	if len(rest) == 0 || rest[0] != ':' {
		return nil
	}
	rest = bytes.TrimLeft(rest[1:], blanks)
	end := 0
	switch {
	case len(rest) > 0 && rest[0] == '"':
		j := bytes.IndexAny(rest[1:], `"\`)
		if j < 0 || rest[1+j] != '"' {
			return nil
		}
		end = j + 2
	default:
		for end < len(rest) && (rest[end] == '-' || rest[end] >= '0' && rest[end] <= '9') {
			end++
		}
	}
	if end == 0 || end > maxIDLength || !json.Valid(rest[:end]) {
		return nil
	}
	return rest[:end]
}
