package sdkshim

import (
	"net/http"
	"strings"
	"sync"
)

// EventStream wraps the http.ResponseWriter of an event stream the SDK's
// streamable handler writes (a 2026-07-28 subscriptions/listen response,
// or a 2025-11-25 session's standalone stream), so that its owner can send
// an event the SDK cannot: the SDK gives a server no call to send a
// notification it does not know (TestSDKSendsNoCustomNotifications;
// docs/sdk-custom-notifications.md proposes one). The SDK's events pass
// through whole and the owner's is written between them, under a lock the
// SDK's writes and flushes pass too. That relies on the SDK writing each
// event in one Write and flushing through FlushError
// (TestSDKWritesOneEventPerWrite). The injected event has no event id, so
// a client that resumes a stream does not get it again.
type EventStream struct {
	http.ResponseWriter
	// event is the whole server-sent event Send writes.
	event []byte
	// openOnHeader: the stream is open once its header is written (a
	// standalone stream writes no event of its own at first).
	openOnHeader bool

	mu sync.Mutex
	// started is set once the stream is open: the SDK has written its
	// first event (a listen stream's acknowledgement) or, with
	// openOnHeader, its header.
	started, pending bool
	// closed is set by Close.
	closed bool
}

// NewEventStream wraps w to send msg, a JSON-RPC message, as an event of
// its own. A listen stream opens with the SDK's acknowledgement, before
// which nothing else may be sent; a standalone stream (standalone true)
// opens with its header.
func NewEventStream(w http.ResponseWriter, msg []byte, standalone bool) *EventStream {
	return &EventStream{ResponseWriter: w, event: []byte("event: message\ndata: " + string(msg) + "\n\n"), openOnHeader: standalone}
}

func (s *EventStream) WriteHeader(code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ResponseWriter.WriteHeader(code)
	if s.openOnHeader && code == http.StatusOK && !s.started {
		s.started = true
		if s.pending {
			s.write()
		}
	}
}

func (s *EventStream) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.ResponseWriter.Write(p)
	if err == nil && !s.started {
		s.started = true
		if s.pending {
			s.write()
		}
	}
	return n, err
}

// FlushError is how the SDK's http.ResponseController flushes the stream:
// under the lock, as the event is written.
func (s *EventStream) FlushError() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil // the handler has returned: nothing to flush
	}
	return http.NewResponseController(s.ResponseWriter).Flush()
}

// Flush is FlushError for the writers above it that flush through
// http.Flusher.
func (s *EventStream) Flush() { _ = s.FlushError() }

// Unwrap lets http.ResponseController reach the rest (deadlines).
func (s *EventStream) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// Send writes the event now, or once the stream is open; sends before
// then are one.
func (s *EventStream) Send() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started {
		s.pending = true
		return
	}
	s.write()
}

// Close is called when the handler serving the stream returns: a later
// Send writes nothing, since the writer may no longer be used.
func (s *EventStream) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
}

// write writes the event on an event stream; s.mu is held. A response
// that is no event stream (an error) is left alone.
func (s *EventStream) write() {
	s.pending = false
	if s.closed || !strings.HasPrefix(s.Header().Get("Content-Type"), "text/event-stream") {
		return
	}
	if _, err := s.ResponseWriter.Write(s.event); err != nil {
		return // the client has gone; the SDK finds out too
	}
	_ = http.NewResponseController(s.ResponseWriter).Flush()
}
