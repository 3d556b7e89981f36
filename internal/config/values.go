package config

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Duration is a time.Duration written in the config as "60s", "1m30s" or a bare
// number of seconds (as Cline writes its timeout).
type Duration time.Duration

// Std returns the value as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// String formats like time.Duration ("1m0s").
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalJSON writes the duration as a string the loader reads back.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// parseDuration accepts Go duration syntax or a number of seconds.
func parseDuration(s string) (Duration, error) {
	s = strings.TrimSpace(s)
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if f < 0 || f > math.MaxInt64/float64(time.Second) || math.IsNaN(f) {
			return 0, fmt.Errorf("%q is out of range", s)
		}
		return Duration(f * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration; write it like \"30s\", \"2m\" or \"1m30s\"", s)
	}
	return Duration(d), nil
}

// IdleTimeout is how long a started stdio server may go without a request
// before toolfold stops it. Zero means never: the server runs until toolfold
// exits. Written as a duration ("10m", "1h30m"), a number of seconds, or
// "never" / "off" / 0 to switch it off.
type IdleTimeout time.Duration

// Std returns the timeout as a time.Duration; zero means never.
func (t IdleTimeout) Std() time.Duration { return time.Duration(t) }

// String formats the timeout like time.Duration ("10m0s"), or "never".
func (t IdleTimeout) String() string {
	if t <= 0 {
		return "never"
	}
	return time.Duration(t).String()
}

// MarshalJSON writes the timeout as a string the loader reads back.
func (t IdleTimeout) MarshalJSON() ([]byte, error) { return json.Marshal(t.String()) }

// parseIdleTimeout accepts what parseDuration does, plus zero and the words
// "never" and "off", which switch idle shutdown off.
func parseIdleTimeout(s string) (IdleTimeout, error) {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "never", "off":
		return 0, nil
	}
	const fix = `write a duration such as "10m" to stop the server after that long without requests, or "never" (or 0) to keep it running`
	if strings.HasPrefix(s, "-") {
		return 0, fmt.Errorf("%q is negative; %s", s, fix)
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if f > math.MaxInt64/float64(time.Second) || math.IsNaN(f) {
			return 0, fmt.Errorf("%q is out of range; %s", s, fix)
		}
		return IdleTimeout(f * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration; %s", s, fix)
	}
	return IdleTimeout(d), nil
}

// ByteSize is a number of bytes, written as a bare integer or with a unit:
// "256KiB", "1MiB" (powers of 1024) or "1MB", "500kB" (powers of 1000). Units are
// case-insensitive; "K", "M", "G" alone are powers of 1024.
type ByteSize int64

// String formats the size with the largest exact binary unit ("256KiB").
func (b ByteSize) String() string {
	for _, u := range []struct {
		name string
		size ByteSize
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if b != 0 && b%u.size == 0 {
			return fmt.Sprintf("%d%s", b/u.size, u.name)
		}
	}
	return strconv.FormatInt(int64(b), 10)
}

// MarshalJSON writes the size as a string the loader reads back.
func (b ByteSize) MarshalJSON() ([]byte, error) { return json.Marshal(b.String()) }

var byteUnits = map[string]float64{
	"": 1, "b": 1,
	"k": 1 << 10, "kib": 1 << 10, "kb": 1e3,
	"m": 1 << 20, "mib": 1 << 20, "mb": 1e6,
	"g": 1 << 30, "gib": 1 << 30, "gb": 1e9,
}

// parseByteSize reads "256KiB", "1.5MB", "4096".
func parseByteSize(s string) (ByteSize, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	mult, okUnit := byteUnits[unit]
	f, err := strconv.ParseFloat(num, 64)
	if num == "" || err != nil || !okUnit {
		return 0, fmt.Errorf("%q is not a size; write it like \"256KiB\", \"1MB\" or a number of bytes", s)
	}
	v := f * mult
	if v > math.MaxInt64/2 {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return ByteSize(math.Round(v)), nil
}

// redactedMark replaces secret values wherever a config is printed or logged.
const redactedMark = "***"

// Secret is a string that never prints: String, fmt verbs and slog all show "***".
// Convert with string(s) where the real value is needed.
type Secret string

// String returns "***" (or "" for an empty secret, so "missing" stays visible).
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return redactedMark
}

// GoString keeps %#v from leaking the value.
func (s Secret) GoString() string { return strconv.Quote(s.String()) }

// LogValue keeps slog from leaking the value.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// SecretMap is a map whose values are secrets (env values, HTTP headers). Reading
// it as a map gives the real values; printing or logging it does not.
type SecretMap map[string]string

// Redacted returns a copy with every value replaced. For an Authorization-style
// value "Bearer xyz" the scheme is kept ("Bearer ***"), which helps debugging.
func (m SecretMap) Redacted() map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = redactValue(v)
	}
	return out
}

func redactValue(v string) string {
	if v == "" {
		return ""
	}
	if scheme, _, ok := strings.Cut(v, " "); ok && (strings.EqualFold(scheme, "Bearer") || strings.EqualFold(scheme, "Basic") || strings.EqualFold(scheme, "Token")) {
		return scheme + " " + redactedMark
	}
	return redactedMark
}

// String formats like a map with redacted values, keys sorted.
func (m SecretMap) String() string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("map[")
	r := m.Redacted()
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(k + ":" + r[k])
	}
	b.WriteByte(']')
	return b.String()
}

// GoString keeps %#v from leaking values.
func (m SecretMap) GoString() string { return "config.SecretMap" + m.String() }

// LogValue keeps slog from leaking values.
func (m SecretMap) LogValue() slog.Value {
	r := m.Redacted()
	keys := make([]string, 0, len(r))
	for k := range r {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	attrs := make([]slog.Attr, len(keys))
	for i, k := range keys {
		attrs[i] = slog.String(k, r[k])
	}
	return slog.GroupValue(attrs...)
}

// Redacted returns a deep copy of the config with every secret replaced (env and
// header values, bearer tokens, passwords and query strings in URLs), safe to log,
// print or marshal as JSON.
func (c *Config) Redacted() *Config {
	if c == nil {
		return nil
	}
	out := *c
	out.MCPServers = make(map[string]ServerConfig, len(c.MCPServers))
	for k, s := range c.MCPServers {
		s.Env = s.Env.Redacted()
		s.Headers = s.Headers.Redacted()
		s.URL = redactURL(s.URL)
		s.Args = append([]string(nil), s.Args...)
		// What ${VAR} put into the URL's path or the args is secret too.
		for _, v := range s.Expanded {
			if v == "" {
				continue
			}
			s.URL = strings.ReplaceAll(s.URL, v, redactedMark)
			for i := range s.Args {
				s.Args[i] = strings.ReplaceAll(s.Args[i], v, redactedMark)
			}
		}
		out.MCPServers[k] = s
	}
	out.Commands = make(map[string]CommandConfig, len(c.Commands))
	for k, cmd := range c.Commands {
		cmd.Env = cmd.Env.Redacted()
		out.Commands[k] = cmd
	}
	out.HTTP.Auth.Tokens = make([]TokenConfig, len(c.HTTP.Auth.Tokens))
	for i, t := range c.HTTP.Auth.Tokens {
		t.Token = Secret(t.Token.String())
		out.HTTP.Auth.Tokens[i] = t
	}
	if o := c.HTTP.Auth.OAuth; o != nil && o.Introspection != nil {
		oc, in := *o, *o.Introspection
		in.ClientSecret = Secret(in.ClientSecret.String())
		oc.Introspection = &in
		out.HTTP.Auth.OAuth = &oc
	}
	return &out
}

// redactURL hides a URL's password and query values, where API keys often live.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || (u.User == nil && u.RawQuery == "") {
		return raw
	}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), redactedMark)
		}
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			q[k] = []string{redactedMark}
		}
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// MarshalJSON writes the parameters as an object in declared order, the way the
// config file has them.
func (ps Params) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, p := range ps {
		if i > 0 {
			b.WriteByte(',')
		}
		key, err := json.Marshal(p.Name)
		if err != nil {
			return nil, fmt.Errorf("marshal parameter name: %w", err)
		}
		val, err := json.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("marshal parameter %q: %w", p.Name, err)
		}
		b.Write(key)
		b.WriteByte(':')
		b.Write(val)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}
