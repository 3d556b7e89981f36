// Package redact keeps secrets out of what toolfold prints: error messages
// (which reach the model as tool results), /healthz, logs and the
// inspection commands. Two rules apply: every URL in a text loses its
// userinfo and its query values ("https://***@h/mcp?key=***"), since Go's
// own errors (url.Error) quote the URL they failed on; and the values a
// config declares secret (env values, header values, a URL's password and
// query values) are replaced by "***" wherever they appear, since servers
// echo them (a stderr line, an HTTP 401 body).
package redact

import (
	"context"
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
		q := u.Query()
		keys := make([]string, 0, len(q))
		for k := range q {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = url.QueryEscape(k) + "=" + Mask
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
		// A value may be printed escaped, as in a URL's query.
		if esc := url.QueryEscape(v); esc != v {
			s.values = append(s.values, esc)
		}
	}
}

// AddURL declares a URL's password and query values secret.
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
	for _, vs := range u.Query() {
		s.Add(vs...)
	}
}

// Merge adds another set's values.
func (s *Secrets) Merge(o *Secrets) {
	if o != nil {
		s.Add(o.values...)
	}
}

// String masks URLs and secret values in text.
func (s *Secrets) String(text string) string {
	text = URLs(text)
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
