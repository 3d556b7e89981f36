package rawcall

// Request is what the byte paths read of one JSON-RPC message from a
// client, found in a single pass over it (ParseRequest): the members
// toolfold acts on, each as the bytes sent (strings quoted, escapes as
// they are), nil where absent. Each Other flag says a member beyond these
// was present at that level, which the typed path must then see.
type Request struct {
	JSONRPC, ID, Method, Params []byte
	Other                       bool // a top-level member beyond the four

	// Of params, when it is an object.
	Name, Arguments, Meta, RequestID []byte
	OtherParams                      bool // a member beyond these four

	// Of params._meta, when it is an object: the per-hop keys and the
	// trace context.
	ProtocolVersion, ClientCapabilities, ClientInfo []byte
	Traceparent, Tracestate, Baggage                []byte
	OtherMeta                                       bool // a member beyond these six
}

// The _meta keys a Request reads (the MCP SDK's per-hop keys and the W3C
// trace context as MCP carries it).
const (
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaClientInfo         = "io.modelcontextprotocol/clientInfo"
)

// ParseRequest reads msg into a Request in one pass that also checks it is
// one valid JSON object, exactly as Valid does: the byte paths used to
// check the line, then walk its members, then its params', then its
// _meta's, each time over the same bytes. It reports false for anything
// that is not a valid JSON object; a later member of a repeated key wins,
// as in encoding/json. It allocates nothing.
func ParseRequest(msg []byte) (r Request, ok bool) {
	i := skipSpace(msg, 0)
	if i >= len(msg) || msg[i] != '{' {
		return r, false
	}
	end, ok := walkObject(msg, i, 1, func(key []byte, start, depth int) (int, bool) {
		var end int
		var ok bool
		if string(key) == "params" && msg[start] == '{' {
			r.clearParams() // a repeated params: the later one wins whole
			end, ok = walkObject(msg, start, depth+1, func(key []byte, start, depth int) (int, bool) {
				if string(key) == "_meta" && msg[start] == '{' {
					r.clearMeta()
					end, ok := walkObject(msg, start, depth+1, func(key []byte, start, depth int) (int, bool) {
						end, ok := validValue(msg, start, depth)
						if ok {
							r.metaMember(key, msg[start:end])
						}
						return end, ok
					})
					if ok {
						r.Meta = msg[start:end]
					}
					return end, ok
				}
				end, ok := validValue(msg, start, depth)
				if ok {
					r.paramsMember(key, msg[start:end])
				}
				return end, ok
			})
			if ok {
				r.Params = msg[start:end]
			}
			return end, ok
		}
		if end, ok = validValue(msg, start, depth); ok {
			r.member(key, msg[start:end])
		}
		return end, ok
	})
	if !ok || skipSpace(msg, end) != len(msg) {
		return Request{}, false
	}
	return r, true
}

func (r *Request) member(key, v []byte) {
	switch string(key) {
	case "jsonrpc":
		r.JSONRPC = v
	case "id":
		r.ID = v
	case "method":
		r.Method = v
	case "params":
		r.Params = v // not an object: nothing inside is read
		r.clearParams()
	default:
		r.Other = true
	}
}

func (r *Request) paramsMember(key, v []byte) {
	switch string(key) {
	case "name":
		r.Name = v
	case "arguments":
		r.Arguments = v
	case "requestId":
		r.RequestID = v
	case "_meta":
		r.Meta = v // not an object: nothing inside is read
		r.clearMeta()
	default:
		r.OtherParams = true
	}
}

func (r *Request) metaMember(key, v []byte) {
	switch string(key) {
	case metaProtocolVersion:
		r.ProtocolVersion = v
	case metaClientCapabilities:
		r.ClientCapabilities = v
	case metaClientInfo:
		r.ClientInfo = v
	case "traceparent":
		r.Traceparent = v
	case "tracestate":
		r.Tracestate = v
	case "baggage":
		r.Baggage = v
	default:
		r.OtherMeta = true
	}
}

func (r *Request) clearParams() {
	r.Name, r.Arguments, r.Meta, r.RequestID, r.OtherParams = nil, nil, nil, nil, false
	r.clearMeta()
}

func (r *Request) clearMeta() {
	r.ProtocolVersion, r.ClientCapabilities, r.ClientInfo = nil, nil, nil
	r.Traceparent, r.Tracestate, r.Baggage, r.OtherMeta = nil, nil, nil, false
}

// walkObject checks the object starting at b[i] == '{', nested depth deep,
// as validObject does, handing each member's value to value, which checks
// it (and may read it) and returns the index just past it.
func walkObject(b []byte, i, depth int, value func(key []byte, start, depth int) (int, bool)) (int, bool) {
	if depth > maxNesting {
		return 0, false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, false
		}
		kend, ok := validString(b, i)
		if !ok {
			return 0, false
		}
		key := b[i+1 : kend-1]
		if i = skipSpace(b, kend); i >= len(b) || b[i] != ':' {
			return 0, false
		}
		if i = skipSpace(b, i+1); i >= len(b) {
			return 0, false
		}
		if i, ok = value(key, i, depth); !ok {
			return 0, false
		}
		if i = skipSpace(b, i); i >= len(b) {
			return 0, false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return i + 1, true
		default:
			return 0, false
		}
	}
}
