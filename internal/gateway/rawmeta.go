package gateway

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/rawcall"
	"github.com/toolfold/toolfold/internal/relay"
)

// find_tools and describe_tools on the stdio byte path.
//
// find_tools is the call an agent makes most, and describe_tools often
// follows it; both answers are kilobytes. Through the SDK a request was
// decoded three times (the message, its params, its _meta) and its answer
// encoded twice (the result, then the response around it, compacting the
// result again); at 20,000 tools that was a quarter of a find_tools call's
// CPU and most of what it allocated. Here the request is the line the
// screen read (rawcall.ParseRequest), and the answer is encoded once and
// completed by relay.Complete, as every result of the byte path is.
//
// The gate is the typed path's: the call is admitted by the same ticket
// (caller, audit, metrics), the tool must be one the client's session
// offers (a role that hides a meta-tool hides it here too), the answer is
// the typed path's own (session.findAnswer, session.describeAnswer), and
// it is written through the screen's writer, bounded as every answer is.
// Whatever the fast path cannot carry exactly goes to the SDK as it came:
// a traced gateway, a request whose _meta says more than the per-hop keys,
// a client that declares extensions, a call that would wait for sources
// still starting.

// metaAnswer is a meta-tool's answer to the arguments raw, without the
// typed path's waits for starting sources (takeMeta leaves a call to the
// typed path while any is pending).
type metaAnswer func(s *session, ctx context.Context, raw json.RawMessage) *mcp.CallToolResult

// takeMeta answers a call of a meta-tool on the byte path with answer,
// or reports false for the SDK to take the line. The call is answered
// before the next line is read: it is CPU alone, as short as the SDK's
// own decoding of the request would have been.
func (e *rawEdge) takeMeta(req *rawRequest, answer metaAnswer, idp, keyp *string, admittedp *bool) bool {
	name := string(req.name)
	if e.g.tr != nil {
		return false // the typed path makes the call's spans
	}
	s, ev, ok := e.metaSession(req)
	if !ok || !s.offersMeta(name) {
		return false
	}
	if expo, _ := s.current(); len(expo.Catalog().Pending()) > 0 {
		return false // the typed path waits for them
	}
	id := string(req.id)
	key, ok := screenKey(req.id)
	if !ok || (e.screen != nil && !e.screen.admitFast(key, ev.stateless)) {
		return false
	}
	*idp, *keyp, *admittedp = id, key, true
	e.g.panicPoint(pathStdioBytes, "tools/call")

	ticket := e.g.admitCall(e.ctx, pathStdioBytes, nil)
	ctx := ticket.recording(e.ctx)
	noteSource(ctx, "toolfold")
	args := req.args
	if args == nil {
		args = json.RawMessage(`{}`)
	}
	res := answer(s, ctx, args)
	msg, err := resultMessage(e.metaMsg[:0], id, res, e.g.completion(ev))
	rec := ticket.record(nil)
	ticket.finish(ctx, name, "", rec.source, outcome(res, err, rec))
	if err != nil {
		// Toolfold's own strings and scores always encode (meta.Result).
		panic("encoding " + name + "'s answer: " + err.Error())
	}
	if e.screen != nil {
		if werr := e.screen.out.writeAnswer(msg, key); werr != nil {
			e.g.log.Debug("could not write a meta-tool's answer to the client", "tool", name, "err", werr)
		}
	}
	// The writer has written msg or copied it (writeAnswer): its buffer
	// serves the next answer, unless one huge answer grew it.
	if cap(msg) <= 256<<10 {
		e.metaMsg = msg[:0]
	}
	return true
}

// metaSession is the session a meta-tool call on the byte path is answered
// in, and the request's era, or false when the typed path must take it:
// as route decides for a catalog tool, and the session's own mode besides
// (a 2026-07-28 request only in a per-request session, a session client's
// only once it initialized).
func (e *rawEdge) metaSession(req *rawRequest) (*session, era, bool) {
	version, caps, info, ok := req.metaMembers()
	if !ok {
		return nil, era{}, false
	}
	if version != nil {
		ev, ok := statelessEra(version, caps, info)
		if !ok || e.s.mode != perRequestMode || rawcall.Member(caps, "extensions") != nil {
			return nil, era{}, false
		}
		var client string
		if info != nil {
			if v := rawcall.Member(info, "name"); v != nil {
				if client, ok = rawcall.String(v); !ok {
					return nil, era{}, false
				}
			}
		}
		// As perRequestMiddleware answers a call (requestClient).
		p := e.g.present(ClientInfo{Name: client, ProtocolVersion: statelessProtocol, Stateless: true})
		return e.g.transient(e.g.cur.Load(), p), ev, true
	}
	ev, ok := e.sessionEra(caps, info)
	return e.s, ev, ok
}

// resultMessage appends to dst the response to request id carrying res,
// encoded once as the SDK encodes a result and completed as the byte path
// completes every result (relay.Complete), with a newline.
func resultMessage(dst []byte, id string, res *mcp.CallToolResult, c relay.Completion) ([]byte, error) {
	// MarshalJSON's own output is compact and escaped as json.Marshal
	// writes it: json.Marshal(res) would only check and copy it again,
	// a tenth of the answer's cost at 20,000 tools.
	body, err := res.MarshalJSON()
	if err != nil {
		return dst, err
	}
	c.Content = true
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"result":`...)
	dst, _, err = relay.Complete(dst, body, c)
	if err != nil {
		return dst, err
	}
	return append(dst, '}', '\n'), nil
}
