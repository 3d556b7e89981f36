package redact

import (
	"bytes"
	"errors"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"unicode"
)

func TestURLs(t *testing.T) {
	tests := []struct{ in, want string }{
		{`Post "https://h.example/mcp?key=s3cr3t&x=1": dial tcp: no such host`, `Post "https://h.example/mcp?key=***&x=***": dial tcp: no such host`},
		{"https://user:pa55word@h/mcp", "https://***@h/mcp"},
		{"at http://127.0.0.1:8080/mcp and sse https://a/b?token=zz#frag", "at http://127.0.0.1:8080/mcp and sse https://a/b?token=***#***"},
		{"no url here ?key=x", "no url here ?key=x"},
		{"http://h/%zz?key=secret", "http://***"},
		{"https://h/mcp?sk-live-abc123", "https://h/mcp?***"},
		{"https://h/mcp?b=2&sk-live-abc123&a=1", "https://h/mcp?b=***&***&a=***"},
	}
	for _, tt := range tests {
		if got := URLs(tt.in); got != tt.want {
			t.Errorf("URLs(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSecrets(t *testing.T) {
	var s Secrets
	s.Add("Bearer tok-abcdef-123", "1", "true", "env-secret-value")
	s.AddURL("https://alice:hunter22@h/mcp?key=query secret")
	in := `401: bad token tok-abcdef-123 (Bearer tok-abcdef-123); env-secret-value; DEBUG=1 true; hunter22; q=query+secret`
	got := s.String(in)
	for _, secret := range []string{"tok-abcdef-123", "env-secret-value", "hunter22", "query+secret"} {
		if strings.Contains(got, secret) {
			t.Errorf("%q survives: %s", secret, got)
		}
	}
	if !strings.Contains(got, "DEBUG=1 true") {
		t.Errorf("short values were masked: %s", got)
	}
	var nilSecrets *Secrets
	if got := nilSecrets.String("http://h/?a=b"); got != "http://h/?a=***" {
		t.Errorf("nil Secrets = %q", got)
	}
}

// A secret is masked however a URL carries it: a bare query item, or (once
// declared, as the config's ${VAR} values are) in the path, escaped or not.
func TestSecretsInURLs(t *testing.T) {
	var s Secrets
	s.AddURL("https://h/mcp?bare-secret-1")
	s.Add("path secret/2")
	for _, in := range []string{
		"the server said: unknown key bare-secret-1",
		`Post "https://h/mcp/path%20secret%2F2/sse": EOF`,
		"no route for /mcp/path secret/2/sse",
	} {
		got := s.String(in)
		if strings.Contains(got, "bare-secret-1") || strings.Contains(got, "secret/2") || strings.Contains(got, "secret%2F2") {
			t.Errorf("String(%q) = %q", in, got)
		}
	}
}

func TestHandler(t *testing.T) {
	var buf bytes.Buffer
	var s Secrets
	s.Add("header-secret-9")
	log := slog.New(Handler(slog.NewTextHandler(&buf, nil), &s)).With("url", "https://h/mcp?key=k1k1k1k1")
	log.Warn("failed at https://u:p4ssw0rd@h/", "error", errors.New("echo header-secret-9"), slog.Group("g", "v", "header-secret-9"))
	out := buf.String()
	for _, secret := range []string{"k1k1k1k1", "p4ssw0rd", "header-secret-9"} {
		if strings.Contains(out, secret) {
			t.Errorf("%q survives in the log: %s", secret, out)
		}
	}
	if !strings.Contains(out, "key=***") {
		t.Errorf("log = %s", out)
	}
}

// FuzzURLs: whatever the text around it, a URL's query value and password
// never survive, and no text makes URLs panic.
func FuzzURLs(f *testing.F) {
	f.Add("h.example", "/mcp", "VALUE1")
	f.Add("127.0.0.1:8080", "", "a+b%20c")
	f.Add("[::1]", "/x/y", "zzzzzz")
	f.Fuzz(func(t *testing.T, host, path, value string) {
		_ = URLs(host + path + value) // any text: no panic
		if len(value) < 4 || strings.ContainsAny(host+path+value, "\"'<>`&#=?@;") || strings.ContainsFunc(host+path+value, unicode.IsSpace) ||
			strings.ContainsAny(value, "/:%\\[]") || strings.ContainsAny(host, "/") ||
			strings.Contains(host+path, value) || strings.Contains(value, Mask) || strings.Contains(value, "://") {
			return
		}
		for _, c := range []struct{ in, leak string }{
			{"see https://" + host + path + "?key=" + value + " now", "=" + value},
			{"see https://user:" + value + "@" + host + path + " now", ":" + value + "@"},
		} {
			if got := URLs(c.in); strings.Contains(got, c.leak) || strings.Contains(got, url.QueryEscape(value)) && url.QueryEscape(value) != value {
				t.Errorf("URLs(%q) = %q keeps the secret", c.in, got)
			}
		}
	})
}
