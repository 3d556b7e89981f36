package sdkshim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DecodedConn is a newline-delimited connection whose incoming messages
// someone else has read and decoded already: the gateway's stdio screen,
// which checks every line with the SDK's own decoder before the SDK may
// see it. The SDK's IOTransport would read each line again and decode it
// twice more (as a batch, then as a message), each time with a decoder
// that allocates its own buffer: on a gateway holding a large catalog that
// garbage, and the collections it brings, were most of a ping's cost.
//
// Hand gives the SDK the next message; End says none follows. Outgoing
// messages are encoded as the SDK's own connection encodes them, one line
// per Write to out. It does not batch: the screen refuses batches.
//
// Pins: TestSDKDecodedMessageOwnsItsBytes (a decoded message keeps no
// reference to the line, which the screen reuses) and
// TestSDKServesADecodedConn (the SDK's session needs nothing of a
// connection beyond mcp.Connection). SDK API that would remove it: an
// IOTransport that decodes each line once, or takes decoded messages.
type DecodedConn struct {
	in  io.Closer      // closing it ends the reads that feed Hand
	out io.WriteCloser // where messages are written, one line each

	incoming chan jsonrpc.Message // from Hand, unbuffered
	ended    chan struct{}        // closed by End, after endErr is set
	endErr   error

	writeMu sync.Mutex // the SDK may write from several goroutines

	closeOnce sync.Once
	closed    chan struct{}
	closeErr  error
}

// NewDecodedConn returns a connection reading from Hand and writing to
// out; closing it closes in and out.
func NewDecodedConn(in io.Closer, out io.WriteCloser) *DecodedConn {
	return &DecodedConn{in: in, out: out, incoming: make(chan jsonrpc.Message), ended: make(chan struct{}), closed: make(chan struct{})}
}

// Transport is the transport that connects to c, once.
func (c *DecodedConn) Transport() mcp.Transport { return decodedTransport{c} }

type decodedTransport struct{ conn *DecodedConn }

func (t decodedTransport) Connect(context.Context) (mcp.Connection, error) { return t.conn, nil }

// Hand gives the SDK msg once it reads it; false when the connection is
// closed first.
func (c *DecodedConn) Hand(msg jsonrpc.Message) bool {
	select {
	case c.incoming <- msg:
		return true
	case <-c.closed:
		return false
	}
}

// End says no message follows: the SDK's next read returns err, or
// io.EOF for nil, which ends its session. Call it once.
func (c *DecodedConn) End(err error) {
	c.endErr = err
	close(c.ended)
}

// Read returns the next message handed over. As the SDK's own connection
// does, a read on a context already done fails, whatever is waiting.
func (c *DecodedConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case msg := <-c.incoming:
		return msg, nil
	case <-c.ended:
		if c.endErr != nil {
			return nil, c.endErr
		}
		return nil, io.EOF
	case <-c.closed:
		return nil, io.EOF
	}
}

// Write encodes msg as one line and writes it to out in one call.
func (c *DecodedConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encoding a message for the client: %w", err)
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err = c.out.Write(append(data, '\n'))
	return err
}

// Close closes in, which ends the reads that feed Hand, and out.
func (c *DecodedConn) Close() error {
	c.closeOnce.Do(func() {
		c.closeErr = errors.Join(c.in.Close(), c.out.Close())
		close(c.closed)
	})
	return c.closeErr
}

// SessionID is empty: a stream has one session.
func (c *DecodedConn) SessionID() string { return "" }

var _ mcp.Connection = (*DecodedConn)(nil)
