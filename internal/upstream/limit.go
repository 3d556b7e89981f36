package upstream

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A stdio server's message larger than its maxMessageBytes is never held
// whole: rawLines reads past the rest of its line, scanning it only for
// its top-level "id" and "method" (idScan), and then fails just the
// request it answered. On stdio the line ends the message, so the
// connection carries on with the next one.
//
// The answer to a fast-path call fails that call at once. The answer to
// one of the SDK's requests is replaced by a JSON-RPC error response with
// the same id, marked by codeTooLarge and its data, which requestError
// and startError word for the reader. An oversized request of the
// server's own is answered with an error; a notification is dropped.

// codeTooLarge is the code of the error response put in place of a
// response too large to read. A server may use the same code, so the
// error's data marks it too (tooLargeData).
const codeTooLarge = -32099

// tooLargeKey is the member of the error's data that marks it as
// toolfold's.
const tooLargeKey = "toolfold.maxMessageBytes"

// tooLargeResponse is the error response that takes the place of an
// oversized response with the given id (raw JSON), newline included.
func tooLargeResponse(id []byte, limit int) []byte {
	b := []byte(`{"jsonrpc":"2.0","id":`)
	b = append(b, id...)
	b = append(b, `,"error":{"code":`...)
	b = strconv.AppendInt(b, codeTooLarge, 10)
	b = append(b, `,"message":"the message was larger than maxMessageBytes","data":{"`...)
	b = append(b, tooLargeKey...)
	b = append(b, `":`...)
	b = strconv.AppendInt(b, int64(limit), 10)
	return append(b, "}}}\n"...)
}

// isTooLarge reports whether e is the error put in place of an oversized
// response.
func isTooLarge(e *jsonrpc.Error) bool {
	if e == nil || e.Code != codeTooLarge {
		return false
	}
	var data map[string]json.RawMessage
	if json.Unmarshal(e.Data, &data) != nil {
		return false
	}
	_, ok := data[tooLargeKey]
	return ok
}

// tooLargeError explains a request whose answer was larger than the
// server's maxMessageBytes.
func (s *server) tooLargeError(what string, cause error) error {
	return s.errorf(ErrTooLarge, cause, "upstream %q sent a message of more than %s (maxMessageBytes) in answer to %s; the request was refused, and the server keeps serving", s.name, s.cfg.EffectiveMaxMessageBytes(), what)
}

// refusedRequest is the error response toolfold sends a server whose
// own request was too large to read, newline included.
func refusedRequest(id []byte, limit int) []byte {
	msg := fmt.Sprintf("toolfold refused the request: it is larger than the %d bytes this server may send (maxMessageBytes)", limit)
	quoted, _ := json.Marshal(msg)
	b := []byte(`{"jsonrpc":"2.0","id":`)
	b = append(b, id...)
	b = append(b, `,"error":{"code":-32600,"message":`...)
	b = append(b, quoted...)
	return append(b, "}}\n"...)
}

// idScan follows a JSON object as its bytes go by, keeping only its
// top-level "id" (as raw JSON, if short) and whether it has a "method":
// what it takes to tell whose answer an oversized message was, in bounded
// memory whatever the order of the members (the TypeScript SDK writes
// "result" before "id").
type idScan struct {
	depth     int
	inString  bool
	escaped   bool
	expectKey bool   // at depth 1, the next string is a key
	inKey     bool   // reading a top-level key
	key       []byte // the top-level key being read, or the last one
	valueOf   string // the key whose value follows at depth 1
	id        []byte // the id's raw value while and once read
	idDone    bool
	idBad     bool // too long, or not a string or number
	method    bool
}

// maxIDLength bounds the id kept; longer ids are not ids anyone sends.
const maxIDLength = 128

func (s *idScan) feed(b []byte) {
	for len(b) > 0 {
		if s.inString && !s.escaped && !s.inKey && !(s.depth == 1 && s.valueOf == "id") {
			// Inside a string nothing matters until its end or an
			// escape: jump there (most of a large message is strings).
			i := bytes.IndexByte(b, '"')
			if j := bytes.IndexByte(b, '\\'); j >= 0 && (i < 0 || j < i) {
				i = j
			}
			if i < 0 {
				return
			}
			b = b[i:]
		}
		s.step(b[0])
		b = b[1:]
	}
}

func (s *idScan) step(c byte) {
	readingID := s.depth == 1 && s.valueOf == "id" && !s.idDone
	if s.inString {
		switch {
		case s.escaped:
			s.escaped = false
		case c == '\\':
			s.escaped = true
		case c == '"':
			s.inString = false
			if s.inKey {
				s.inKey = false
			}
		}
		if s.inKey && s.inString {
			if len(s.key) < 64 {
				s.key = append(s.key, c)
			}
		} else if readingID {
			s.keepID(c)
			if !s.inString {
				s.idDone = true
			}
		}
		return
	}
	switch c {
	case '"':
		s.inString = true
		if s.depth == 1 && s.expectKey {
			s.inKey, s.key = true, s.key[:0]
		} else if readingID {
			s.keepID(c)
		}
		return
	case '{', '[':
		if readingID {
			s.idBad, s.idDone = true, true
		}
		s.depth++
		if s.depth == 1 {
			s.expectKey = c == '{'
		}
		return
	case '}', ']':
		if readingID {
			s.idDone = true
		}
		s.depth--
		return
	case ':':
		if s.depth == 1 {
			s.expectKey, s.valueOf = false, string(s.key)
			if s.valueOf == "method" {
				s.method = true
			}
		}
		return
	case ',':
		if readingID {
			s.idDone = true
		}
		if s.depth == 1 {
			s.expectKey, s.valueOf = true, ""
		}
		return
	case ' ', '\t', '\r', '\n':
		if readingID && len(s.id) > 0 {
			s.idDone = true
		}
		return
	}
	if readingID {
		s.keepID(c)
	}
}

func (s *idScan) keepID(c byte) {
	if len(s.id) >= maxIDLength {
		s.idBad = true
		return
	}
	s.id = append(s.id, c)
}

// ID is the message's top-level id as raw JSON, or nil when it had none
// that can be answered.
func (s *idScan) ID() []byte {
	if s.idBad || !s.idDone || len(s.id) == 0 || string(s.id) == "null" || !json.Valid(s.id) {
		return nil
	}
	return s.id
}

// bound keeps what a server's tool list may make toolfold hold within its
// limits: at most its maxTools tools (the first ones, in the server's
// order) and descriptions of at most Options.MaxDescriptionBytes, cut with
// an ellipsis. Each is logged once per server, naming it and the tools.
func (s *server) bound(tools []*mcp.Tool) []*mcp.Tool {
	if limit := s.cfg.EffectiveMaxTools(); len(tools) > limit {
		if !s.warnedTools.Swap(true) {
			s.log.Warn("upstream lists more tools than its maxTools; the rest are left out",
				"maxTools", limit, "first_left_out", tools[limit].Name)
		}
		tools = tools[:limit:limit]
	}
	limit := s.m.opts.MaxDescriptionBytes
	var cut []string
	for i, t := range tools {
		if len(t.Description) <= limit {
			continue
		}
		if cut == nil {
			tools = slices.Clone(tools) // the caller's list stays as it was
		}
		short := *t
		short.Description = truncate(t.Description, limit)
		tools[i] = &short
		cut = append(cut, t.Name)
	}
	if len(cut) > 0 && !s.warnedDescriptions.Swap(true) {
		names := cut[:min(len(cut), 10)]
		s.log.Warn("upstream tool descriptions longer than toolfold keeps were cut",
			"max_bytes", limit, "tools", strings.Join(names, ", "), "count", len(cut))
	}
	return tools
}

// ellipsis ends a cut description.
const ellipsis = "…"

// truncate cuts s to at most limit bytes, ellipsis included, on a
// character boundary.
func truncate(s string, limit int) string {
	n := max(limit-len(ellipsis), 0)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + ellipsis
}
