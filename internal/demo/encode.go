package demo

import (
	"context"
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold"
)

func addEncodeTools(g *toolfold.Group) {
	tool(g, &mcp.Tool{
		Name:        "base64_encode",
		Description: "Encode text (as UTF-8 bytes) in base64, standard or URL-safe, with or without padding. Returns the encoded string.",
		Annotations: readOnly("Base64 encode"),
	}, base64Encode)

	tool(g, &mcp.Tool{
		Name:        "base64_decode",
		Description: "Decode base64 in any of its common forms (standard or URL-safe, padded or not, with line breaks). Returns the text, or hex when the bytes are not UTF-8 text.",
		Annotations: readOnly("Base64 decode"),
	}, base64Decode)

	tool(g, &mcp.Tool{
		Name:        "url_encode",
		Description: "Percent-encode text for a URL query value (space becomes +) or a path segment (space becomes %20). Returns the encoded string.",
		Annotations: readOnly("URL encode"),
		InputSchema: schemaFor[urlEncodeInput](func(p map[string]*jsonschema.Schema) { enum(p["component"], "query", "path") }),
	}, urlEncode)

	tool(g, &mcp.Tool{
		Name:        "url_decode",
		Description: "Decode a percent-encoded URL query value or path segment. Returns the decoded text.",
		Annotations: readOnly("URL decode"),
		InputSchema: schemaFor[urlDecodeInput](func(p map[string]*jsonschema.Schema) { enum(p["component"], "query", "path") }),
	}, urlDecode)

	tool(g, &mcp.Tool{
		Name:        "hex_encode",
		Description: "Encode text (as UTF-8 bytes) in lower-case hexadecimal, two digits per byte. Returns the hex string.",
		Annotations: readOnly("Hex encode"),
	}, hexEncode)

	tool(g, &mcp.Tool{
		Name:        "hex_decode",
		Description: "Decode hexadecimal (spaces, colons and a 0x prefix are ignored) to bytes. Returns them as text when they are UTF-8, and as base64 otherwise.",
		Annotations: readOnly("Hex decode"),
	}, hexDecode)

	tool(g, &mcp.Tool{
		Name:        "hash_text",
		Description: "Hash text (as UTF-8 bytes) with MD5, SHA-1, SHA-256 or SHA-512, or compute an HMAC when a key is given. Returns the digest in hex and base64.",
		Annotations: readOnly("Hash text"),
		InputSchema: schemaFor[hashInput](func(p map[string]*jsonschema.Schema) { enum(p["algorithm"], hashNames...) }),
	}, hashText)
}

type base64EncodeInput struct {
	Text      string `json:"text" jsonschema:"the text to encode"`
	URLSafe   bool   `json:"url_safe,omitempty" jsonschema:"use the URL-safe alphabet (- and _ instead of + and /)"`
	NoPadding bool   `json:"no_padding,omitempty" jsonschema:"leave out the trailing = padding"`
}

type encodedOutput struct {
	Encoded string `json:"encoded" jsonschema:"the encoded text"`
}

func base64Encode(_ context.Context, in base64EncodeInput) (encodedOutput, error) {
	return encodedOutput{Encoded: base64Encoding(in.URLSafe, !in.NoPadding).EncodeToString([]byte(in.Text))}, nil
}

func base64Encoding(urlSafe, padded bool) *base64.Encoding {
	switch {
	case urlSafe && padded:
		return base64.URLEncoding
	case urlSafe:
		return base64.RawURLEncoding
	case padded:
		return base64.StdEncoding
	}
	return base64.RawStdEncoding
}

type base64DecodeInput struct {
	Encoded string `json:"encoded" jsonschema:"the base64 to decode; white space is ignored"`
}

// decodedOutput carries bytes that may or may not be text.
type decodedOutput struct {
	Text   string `json:"text,omitempty" jsonschema:"the decoded bytes as text, when they are valid UTF-8"`
	IsText bool   `json:"is_text" jsonschema:"true when the bytes are valid UTF-8 text"`
	Hex    string `json:"hex,omitempty" jsonschema:"the decoded bytes in hex, when they are not text"`
	Base64 string `json:"base64,omitempty" jsonschema:"the decoded bytes in base64, when they are not text (hex_decode only)"`
	Bytes  int    `json:"bytes" jsonschema:"how many bytes were decoded"`
}

func base64Decode(_ context.Context, in base64DecodeInput) (decodedOutput, error) {
	s := strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, in.Encoded)
	if s == "" {
		return decodedOutput{}, errEmpty("encoded", `base64 text such as "aGVsbG8="`)
	}
	urlSafe := strings.ContainsAny(s, "-_")
	padded := strings.HasSuffix(s, "=")
	b, err := base64Encoding(urlSafe, padded).DecodeString(s)
	if err != nil {
		return decodedOutput{}, fmt.Errorf("encoded is not valid base64: %w; check for characters outside A-Z a-z 0-9 + / (or - _) and for a cut-off end", err)
	}
	out := decodedOutput{Bytes: len(b), IsText: utf8.Valid(b)}
	if out.IsText {
		out.Text = string(b)
	} else {
		out.Hex = hex.EncodeToString(b)
	}
	return out, nil
}

type urlEncodeInput struct {
	Text      string `json:"text" jsonschema:"the text to encode"`
	Component string `json:"component,omitempty" jsonschema:"query (default) for a query parameter value, path for a path segment"`
}

func urlEncode(_ context.Context, in urlEncodeInput) (encodedOutput, error) {
	switch in.Component {
	case "", "query":
		return encodedOutput{Encoded: url.QueryEscape(in.Text)}, nil
	case "path":
		return encodedOutput{Encoded: url.PathEscape(in.Text)}, nil
	}
	return encodedOutput{}, fmt.Errorf("unknown component %q: pass %s", in.Component, oneOf("query", "path"))
}

type urlDecodeInput struct {
	Encoded   string `json:"encoded" jsonschema:"the percent-encoded text"`
	Component string `json:"component,omitempty" jsonschema:"query (default: + means space) or path (+ stays +)"`
}

type urlDecodeOutput struct {
	Text string `json:"text" jsonschema:"the decoded text"`
}

func urlDecode(_ context.Context, in urlDecodeInput) (urlDecodeOutput, error) {
	var (
		s   string
		err error
	)
	switch in.Component {
	case "", "query":
		s, err = url.QueryUnescape(in.Encoded)
	case "path":
		s, err = url.PathUnescape(in.Encoded)
	default:
		return urlDecodeOutput{}, fmt.Errorf("unknown component %q: pass %s", in.Component, oneOf("query", "path"))
	}
	if err != nil {
		return urlDecodeOutput{}, fmt.Errorf("encoded is not valid percent-encoding: %w; every %% must be followed by two hex digits (write %%25 for a literal %%)", err)
	}
	return urlDecodeOutput{Text: s}, nil
}

type hexEncodeInput struct {
	Text string `json:"text" jsonschema:"the text to encode"`
}

func hexEncode(_ context.Context, in hexEncodeInput) (encodedOutput, error) {
	return encodedOutput{Encoded: hex.EncodeToString([]byte(in.Text))}, nil
}

type hexDecodeInput struct {
	Hex string `json:"hex" jsonschema:"hexadecimal digits, e.g. 68656c6c6f or 68:65:6c or 0x68656c; case, spaces and colons do not matter"`
}

func hexDecode(_ context.Context, in hexDecodeInput) (decodedOutput, error) {
	s := strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(in.Hex), "0x"), "0X")
	s = strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || r == ':' || r == '-' {
			return -1
		}
		return r
	}, s)
	if s == "" {
		return decodedOutput{}, errEmpty("hex", `hex digits such as "68656c6c6f"`)
	}
	if len(s)%2 == 1 {
		return decodedOutput{}, fmt.Errorf("hex has an odd number of digits (%d): every byte takes two, so a digit is missing or extra", len(s))
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return decodedOutput{}, fmt.Errorf("hex is not valid: %w; use only 0-9 and a-f", err)
	}
	out := decodedOutput{Bytes: len(b), IsText: utf8.Valid(b)}
	if out.IsText {
		out.Text = string(b)
	} else {
		out.Base64 = base64.StdEncoding.EncodeToString(b)
	}
	return out, nil
}

var hashNames = []string{"md5", "sha1", "sha256", "sha512"}

type hashInput struct {
	Text      string `json:"text" jsonschema:"the text to hash"`
	Algorithm string `json:"algorithm,omitempty" jsonschema:"md5, sha1, sha256 (default) or sha512; md5 and sha1 are broken for security and only fit checksums"`
	Key       string `json:"key,omitempty" jsonschema:"a secret key: when given, the result is HMAC(key, text) with the algorithm"`
}

type hashOutput struct {
	Algorithm string `json:"algorithm" jsonschema:"the algorithm used, with hmac- in front when a key was given"`
	Hex       string `json:"hex" jsonschema:"the digest in lower-case hex"`
	Base64    string `json:"base64" jsonschema:"the digest in standard base64"`
}

func hashText(_ context.Context, in hashInput) (hashOutput, error) {
	algo := in.Algorithm
	if algo == "" {
		algo = "sha256"
	}
	var newHash func() hash.Hash
	switch algo {
	case "md5":
		newHash = md5.New
	case "sha1":
		newHash = sha1.New
	case "sha256":
		newHash = sha256.New
	case "sha512":
		newHash = sha512.New
	default:
		return hashOutput{}, fmt.Errorf("unknown algorithm %q: pass one of %s", in.Algorithm, oneOf(hashNames...))
	}
	var h hash.Hash
	name := algo
	if in.Key != "" {
		h = hmac.New(newHash, []byte(in.Key))
		name = "hmac-" + name
	} else {
		h = newHash()
	}
	h.Write([]byte(in.Text))
	sum := h.Sum(nil)
	return hashOutput{Algorithm: name, Hex: hex.EncodeToString(sum), Base64: base64.StdEncoding.EncodeToString(sum)}, nil
}
