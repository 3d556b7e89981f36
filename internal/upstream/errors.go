package upstream

import (
	"errors"
	"fmt"
	"time"

	"github.com/toolfold/toolfold/internal/redact"
)

// Kinds of failure a caller may want to tell apart with errors.Is. Every error
// the Manager returns is one sentence written for the person reading it; these
// sentinels only classify it.
var (
	// ErrUnknownServer: no server of that name is configured.
	ErrUnknownServer = errors.New("unknown upstream server")
	// ErrRemoved: a config reload took the server away.
	ErrRemoved = errors.New("upstream server removed by a config change")
	// ErrDisabled: the server is configured with "disabled": true.
	ErrDisabled = errors.New("upstream server disabled")
	// ErrExcluded: the tool is filtered out by the server's include/exclude.
	ErrExcluded = errors.New("tool excluded by config")
	// ErrUnsupported: the server does not offer the feature (resources,
	// prompts, completion, logging) asked for.
	ErrUnsupported = errors.New("feature not offered by the upstream server")
	// ErrStartFailed: the server could not be started or connected to.
	ErrStartFailed = errors.New("upstream server failed to start")
	// ErrExited: the server's process exited, or its connection dropped, while
	// the request was in flight. The server is restarted on the next need.
	ErrExited = errors.New("upstream server exited")
	// ErrTimeout: the server did not answer within its configured timeout.
	ErrTimeout = errors.New("upstream server timed out")
	// ErrTooLarge: the server answered with a message larger than its
	// maxMessageBytes; only that request failed.
	ErrTooLarge = errors.New("upstream message too large")
	// ErrInvalidAnswer: the server answered with a message that is not
	// valid JSON; only that request failed.
	ErrInvalidAnswer = errors.New("upstream answer not valid JSON")
	// ErrClosed: the Manager was closed.
	ErrClosed = errors.New("upstream manager closed")
)

// upstreamError is a message for people that still answers errors.Is for its
// kind and errors.As/Is for its cause.
type upstreamError struct {
	msg   string
	kind  error
	cause error
}

func (e *upstreamError) Error() string { return e.msg }

// Is matches the kind; the cause is reached through Unwrap.
func (e *upstreamError) Is(target error) bool { return e.kind != nil && target == e.kind }

func (e *upstreamError) Unwrap() error { return e.cause }

// Outcome classifies the failure for the gateway's metrics and traces:
// "crash", "timeout", "unavailable", or "" for the rest.
func (e *upstreamError) Outcome() string {
	switch e.kind {
	case ErrExited:
		return "crash"
	case ErrTimeout:
		return "timeout"
	case ErrStartFailed:
		return "unavailable"
	}
	return ""
}

// newError words an error. URLs in it lose their userinfo and query (Go's
// url.Error quotes the URL it failed on, secrets and all): the message may
// reach a model, /healthz and the logs. An error about one server is made
// with its errorf instead, which masks that server's secrets too.
func newError(kind, cause error, format string, args ...any) error {
	return maskedError(nil, kind, cause, format, args...)
}

// errorf words an error about the server, masking its secrets as well as
// URLs: what the server said (a JSON-RPC error's message, an initialize
// failure, its stderr) may echo a token it was given.
func (s *server) errorf(kind, cause error, format string, args ...any) error {
	return maskedError(s.secrets, kind, cause, format, args...)
}

func maskedError(secrets *redact.Secrets, kind, cause error, format string, args ...any) error {
	return &upstreamError{msg: secrets.String(fmt.Sprintf(format, args...)), kind: kind, cause: cause}
}

// humanDuration writes 60s as "60s" and 90s as "90s" (not "1m30s"), which is
// how the config's timeouts are usually written.
func humanDuration(d time.Duration) string {
	switch {
	case d >= time.Second && d%time.Second == 0:
		return fmt.Sprintf("%ds", d/time.Second)
	case d >= time.Second:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.String()
}
