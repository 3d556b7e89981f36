package relay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/rawcall"
)

// Completion says what Complete adds to a result.
type Completion struct {
	// Content: a tools/call result, whose "content" the protocol requires
	// ([] when absent or null).
	Content bool
	// ResultType: a 2026-07-28 result, which says "resultType". One that
	// already says what it is ("resultType", "inputRequests") is left as
	// it is.
	ResultType bool
	// ServerInfo, if set, is the server's implementation, encoded, which a
	// 2026-07-28 result names in its _meta (MetaKeyServerInfo) unless the
	// result names one already, as the SDK annotates the results of its
	// handlers.
	ServerInfo json.RawMessage
}

// ErrNotObject: a result that is not one JSON object cannot be completed.
var ErrNotObject = errors.New("the result is not a JSON object")

// ErrBadMeta: a result whose _meta is not an object cannot be named the
// server's (Completion.ServerInfo); the SDK's client refuses it too.
var ErrBadMeta = errors.New("the result's _meta is not a JSON object")

// The members Complete adds, as the SDK encodes them: "content" first (the
// SDK's first member but _meta), "resultType" last.
var (
	contentMember    = []byte(`"content":[]`)
	resultTypeMember = []byte(`"resultType":"complete"`)
)

// Complete appends res, made complete as need says, to dst, and reports
// whether the result says "isError":true. It is the one place that says
// what a complete result is: the typed path (sdkshim.Complete) and the byte
// path (Answer) both complete through it, so that the same answer reads the
// same on both, byte for byte where the source wrote its members in the
// SDK's order (TestCompleteMatchesTheTypedPath).
//
// res must be valid JSON (rawcall.Valid); one that is not an object is
// refused with ErrNotObject, one whose _meta is not an object (where the
// server's info goes in) with ErrBadMeta, and nothing appended. Members are added, never
// reordered: "content" first, "resultType" last. A "content":null is
// replaced by [], the rare case that costs an encoding.
func Complete(dst, res []byte, c Completion) (out []byte, isError bool, err error) {
	res = bytes.TrimSpace(res)
	var hasContent, nullContent, hasType bool
	var meta []byte
	if len(res) == 0 || res[0] != '{' || rawcall.Members(res, func(k, v []byte) bool {
		switch string(k) {
		case "content":
			hasContent, nullContent = true, string(v) == "null"
		case "resultType", "inputRequests":
			hasType = true
		case "isError":
			isError = string(v) == "true"
		case "_meta":
			meta = v
		}
		return true
	}) != nil {
		return dst, false, ErrNotObject
	}
	fixMeta := c.ServerInfo != nil && meta != nil && rawcall.Member(meta, mcp.MetaKeyServerInfo) == nil
	if (nullContent && c.Content) || fixMeta {
		// Rare enough to re-encode: a member must be replaced, not added.
		// The SDK encodes _meta as a map, its keys sorted, as here.
		fixed, err := fixMembers(res, nullContent && c.Content, fixMeta, c.ServerInfo)
		if err != nil {
			return dst, false, err
		}
		res = fixed
		hasContent = hasContent || nullContent
	}
	addMeta := c.ServerInfo != nil && meta == nil
	addContent := c.Content && !hasContent
	addType := c.ResultType && !hasType
	if !addMeta && !addContent && !addType {
		return append(dst, res...), isError, nil
	}
	// res is an object: its members, without the braces.
	inner := bytes.TrimSpace(res[1 : len(res)-1])
	dst = append(dst, '{')
	if addMeta {
		dst = append(dst, `"_meta":{"`+mcp.MetaKeyServerInfo+`":`...)
		dst = append(dst, c.ServerInfo...)
		dst = append(dst, '}')
		if addContent || len(inner) > 0 {
			dst = append(dst, ',')
		}
	}
	if addContent {
		dst = append(dst, contentMember...)
		if len(inner) > 0 {
			dst = append(dst, ',')
		}
	}
	dst = append(dst, inner...)
	if addType {
		if addMeta || addContent || len(inner) > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, resultTypeMember...)
	}
	return append(dst, '}'), isError, nil
}

// fixMembers re-encodes a result whose "content" is null (content) or whose
// _meta lacks the server's info (meta), as the SDK would encode it.
func fixMembers(res []byte, content, meta bool, serverInfo json.RawMessage) ([]byte, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(res, &members); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotObject, err)
	}
	if content {
		members["content"] = json.RawMessage("[]")
	}
	if meta {
		var m map[string]json.RawMessage
		if json.Unmarshal(members["_meta"], &m) != nil {
			return nil, ErrBadMeta
		}
		if m == nil { // "_meta":null
			m = map[string]json.RawMessage{}
		}
		m[mcp.MetaKeyServerInfo] = serverInfo
		b, err := json.Marshal(m)
		if err != nil {
			return nil, fmt.Errorf("encoding the result's _meta: %w", err)
		}
		members["_meta"] = b
	}
	fixed, err := json.Marshal(members)
	if err != nil {
		return nil, fmt.Errorf("encoding the result: %w", err)
	}
	return fixed, nil
}
