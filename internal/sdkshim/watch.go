package sdkshim

import (
	"bytes"
	"io"
)

// WatchMethod passes body, a streamable HTTP response's, through unchanged
// and calls found each time a message naming method goes by (plain
// responses and event streams alike, also across reads), without parsing
// any of it; a result that quotes the method's name costs one needless
// call.
//
// An SDK client drops a notification it does not know before any hook
// (TestSDKClientHearsNoCustomNotifications), and its streamable connection
// cannot be wrapped to watch messages as they are read
// (TestSDKStreamableClientConnectionCannotBeWrapped); so an HTTP round
// tripper watches the bodies instead. docs/sdk-workarounds.md, item 12,
// proposes AddReceivingCustomNotification.
func WatchMethod(body io.ReadCloser, method string, found func()) io.ReadCloser {
	return &methodWatcher{ReadCloser: body, needle: []byte(`"` + method + `"`), found: found}
}

type methodWatcher struct {
	io.ReadCloser
	needle []byte
	found  func()
	tail   []byte // the last len(needle)-1 bytes seen
}

func (w *methodWatcher) Read(p []byte) (int, error) {
	n, err := w.ReadCloser.Read(p)
	if n > 0 {
		rest := append(w.tail, p[:n]...)
		for {
			i := bytes.Index(rest, w.needle)
			if i < 0 {
				break
			}
			w.found()
			rest = rest[i+len(w.needle):]
		}
		// What follows the last match may begin the next one.
		keep := min(len(rest), len(w.needle)-1)
		w.tail = append(w.tail[:0:0], rest[len(rest)-keep:]...)
	}
	return n, err
}
