package oauth

import (
	"fmt"
	"io"
	"net/http"
)

// Bounds on what toolfold reads from an authorization server, so that a
// provider that is broken or hostile cannot make it hold an unbounded
// document in memory or search an unbounded key set on every token.
const (
	maxMetadataBytes      = 1 << 20
	maxJWKSBytes          = 1 << 20
	maxJWKSKeys           = 100
	maxIntrospectionBytes = 256 << 10
)

// limitError is a document that passed one of the bounds above.
type limitError struct {
	what  string // "the answer of https://…", "the key set at https://…"
	limit string // "1 MiB", "100 keys"
}

func (e *limitError) Error() string {
	return fmt.Sprintf("%s is larger than %s, the most toolfold accepts; the authorization server is misconfigured or not the one intended", e.what, e.limit)
}

func byteSize(n int64) string {
	switch {
	case n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// boundedBody reads at most limit bytes and then fails: unlike
// io.LimitReader, a document cut short is an error, not a shorter document
// that a JSON decoder reports as malformed.
type boundedBody struct {
	io.ReadCloser
	left  int64
	limit int64
	url   string
	over  bool
}

func newBoundedBody(body io.ReadCloser, limit int64, url string) *boundedBody {
	return &boundedBody{ReadCloser: body, left: limit, limit: limit, url: url}
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.over {
		return 0, b.tooLarge()
	}
	// One byte beyond the limit tells a body of exactly limit bytes from a
	// longer one.
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.ReadCloser.Read(p)
	if int64(n) > b.left {
		b.over = true
		return int(b.left), b.tooLarge()
	}
	b.left -= int64(n)
	return n, err
}

func (b *boundedBody) tooLarge() error {
	return &limitError{what: "the answer of " + b.url, limit: byteSize(b.limit)}
}

// boundedTransport bounds every response body. It is how the key set
// fetched by jwkset, which decodes the body it is handed, is bounded.
type boundedTransport struct {
	base  http.RoundTripper
	limit int64
}

func (t boundedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = newBoundedBody(resp.Body, t.limit, req.URL.Redacted())
	return resp, nil
}

// boundedClient is c whose response bodies stop at limit bytes.
func boundedClient(c *http.Client, limit int64) *http.Client {
	bc := *c
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	bc.Transport = boundedTransport{base: base, limit: limit}
	return &bc
}
