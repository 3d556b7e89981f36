// Package redact keeps secrets out of what toolfold prints: error messages
// (which reach the model as tool results), /healthz, logs and the
// inspection commands. Two rules apply: every URL in a text loses its
// userinfo, its query values and its bare query items
// ("https://***@h/mcp?key=***&***"), since Go's own errors (url.Error)
// quote the URL they failed on; and the values a config declares secret
// (header values, what ${VAR} expanded to, a URL's password and query
// values, env values the caller deems secret) are replaced by "***"
// wherever they appear, since servers echo them (a stderr line, an HTTP
// 401 body, a JSON-RPC error).
package redact

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// Mask replaces what is redacted.
const Mask = "***"

// MinSecretLen is the shortest value replaced wherever it appears: shorter
// env values ("1", "true", "info") are settings, not secrets, and masking
// them would garble every message. URLs are redacted whatever their length.
const MinSecretLen = 6

// urlPattern finds URLs with a scheme in free text; it stops at blanks and
// quotes, which is where Go's errors end a quoted URL.
var urlPattern = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s"'<>` + "`" + `]+`)

// URLs redacts the userinfo and query values of every URL in s.
func URLs(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	return urlPattern.ReplaceAllStringFunc(s, URL)
}

// URL redacts one URL's userinfo and query values, keeping the query's
// keys, so a person can still tell which URL it was. Something that does
// not parse as a URL keeps only its scheme.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		scheme, _, _ := strings.Cut(raw, "://")
		return scheme + "://" + Mask
	}
	if u.User != nil {
		u.User = url.User(Mask)
	}
	if u.RawQuery != "" {
		// A key with a value keeps its key; a bare item ("?sk-123") is
		// all value, and is masked whole.
		parts := strings.Split(u.RawQuery, "&")
		for i, part := range parts {
			if key, _, ok := strings.Cut(part, "="); ok {
				parts[i] = key + "=" + Mask
			} else if part != "" {
				parts[i] = Mask
			}
		}
		u.RawQuery = strings.Join(parts, "&")
	}
	if u.Fragment != "" {
		u.Fragment = Mask
	}
	// url.URL escapes the mask in userinfo and query; put it back as is.
	return strings.NewReplacer("%2A%2A%2A", Mask, "%2a%2a%2a", Mask).Replace(u.String())
}

// Secrets are values to mask wherever they appear. The zero value masks
// nothing but URLs.
type Secrets struct {
	values []string // longest first, so a secret containing another goes whole
}

// Add declares values secret. Values shorter than MinSecretLen are left
// alone. An "Authorization"-style value ("Bearer abc…") adds its token too.
func (s *Secrets) Add(values ...string) {
	for _, v := range values {
		v = strings.TrimSpace(v)
		if scheme, token, ok := strings.Cut(v, " "); ok && len(scheme) < 16 {
			s.add(strings.TrimSpace(token))
		}
		s.add(v)
	}
	slices.SortFunc(s.values, func(a, b string) int { return len(b) - len(a) })
}

func (s *Secrets) add(v string) {
	if len(v) >= MinSecretLen && !slices.Contains(s.values, v) {
		s.values = append(s.values, v)
		// A value may be printed escaped, as in a URL's query or path.
		for _, esc := range []string{url.QueryEscape(v), url.PathEscape(v)} {
			if esc != v && !slices.Contains(s.values, esc) {
				s.values = append(s.values, esc)
			}
		}
	}
}

// AddURL declares a URL's userinfo, query values and bare query items
// ("?sk-123") secret. A secret elsewhere in a URL (its path) cannot be told
// from the rest; the config's record of what ${VAR} put there can (see
// config.ServerConfig.Expanded).
func (s *Secrets) AddURL(raw string) {
	u, err := url.Parse(raw)
	if err != nil {
		return
	}
	if p, ok := u.User.Password(); ok {
		s.Add(p)
	}
	if u.User != nil {
		s.Add(u.User.Username())
	}
	for _, part := range strings.Split(u.RawQuery, "&") {
		key, value, ok := strings.Cut(part, "=")
		if !ok {
			value = key
		}
		if v, err := url.QueryUnescape(value); err == nil {
			value = v
		}
		s.Add(value)
	}
}

// SecretEnvName reports whether an environment variable's name says it
// holds a secret (GITHUB_TOKEN, API_KEY, DB_PASSWORD, CLIENT_SECRET, AUTH,
// CREDENTIALS): such a value is masked even when written literally.
func SecretEnvName(name string) bool { return secretName.MatchString(name) }

var secretName = regexp.MustCompile(`(?i)TOKEN|KEY|SECRET|PASS|AUTH|CRED`)

// PlaceVariable reports whether a variable tells where things are or who
// runs them (${HOME}/notes), never a secret: masking what it expanded to
// would hide every path in every message.
func PlaceVariable(name string) bool {
	switch name {
	case "HOME", "USERPROFILE", "USER", "USERNAME", "LOGNAME", "PWD", "TMPDIR", "TMP", "TEMP":
		return true
	}
	return false
}

// Merge adds another set's values.
func (s *Secrets) Merge(o *Secrets) {
	if o != nil {
		s.Add(o.values...)
	}
}

// String masks URLs and secret values in text. Values go first, so a
// secret in a URL's path is masked as it was printed, and again after the
// URLs are rewritten, in case rewriting a URL changed how one is escaped.
func (s *Secrets) String(text string) string {
	text = s.mask(text)
	text = URLs(text)
	return s.mask(text)
}

// Values masks the secret values in text and leaves its URLs alone: for a
// program's own output, whose URLs are its data.
func (s *Secrets) Values(text string) string { return s.mask(text) }

func (s *Secrets) mask(text string) string {
	if s == nil {
		return text
	}
	for _, v := range s.values {
		if strings.Contains(text, v) {
			text = strings.ReplaceAll(text, v, Mask)
		}
	}
	return text
}

// Handler wraps a slog.Handler so that no record it passes on holds a
// secret: the message and every string, error or stringer attribute are
// masked.
func Handler(h slog.Handler, s *Secrets) slog.Handler {
	return &handler{next: h, s: s}
}

type handler struct {
	next slog.Handler
	s    *Secrets
}

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h *handler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, h.s.String(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

func (h *handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	masked := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		masked[i] = h.attr(a)
	}
	return &handler{next: h.next.WithAttrs(masked), s: h.s}
}

func (h *handler) WithGroup(name string) slog.Handler {
	return &handler{next: h.next.WithGroup(name), s: h.s}
}

func (h *handler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.s.String(v.String()))
	case slog.KindGroup:
		group := v.Group()
		masked := make([]any, len(group))
		for i, g := range group {
			masked[i] = h.attr(g)
		}
		return slog.Group(a.Key, masked...)
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			return slog.String(a.Key, h.s.String(x.Error()))
		case interface{ String() string }:
			return slog.String(a.Key, h.s.String(x.String()))
		case []byte:
			return slog.String(a.Key, h.s.String(string(x)))
		}
	}
	return a
}

// Empty reports whether no secret value is declared (URLs are still
// redacted by String).
func (s *Secrets) Empty() bool { return s == nil || len(s.values) == 0 }

// JSON masks the secret values in every string (keys included) of a JSON
// text, decoded, so a secret is found however the text escaped it. changed
// is false, and out is data, when nothing was masked.
func (s *Secrets) JSON(data []byte) (out []byte, changed bool, err error) {
	if s.Empty() {
		return data, false, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false, fmt.Errorf("masking secrets in JSON: %w", err)
	}
	v = s.walk(v, &changed)
	if !changed {
		return data, false, nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, false, fmt.Errorf("masking secrets in JSON: %w", err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), true, nil
}

func (s *Secrets) walk(v any, changed *bool) any {
	switch x := v.(type) {
	case string:
		if m := s.mask(x); m != x {
			*changed = true
			return m
		}
	case []any:
		for i := range x {
			x[i] = s.walk(x[i], changed)
		}
	case map[string]any:
		for k, e := range x {
			e = s.walk(e, changed)
			if mk := s.mask(k); mk != k {
				*changed = true
				delete(x, k)
				k = mk
			}
			x[k] = e
		}
	}
	return v
}
