package sdkshim_test

import (
	"bytes"
	"io"
	"slices"
	"testing"

	"github.com/toolfold/toolfold/internal/sdkshim"
)

// chunkReader hands out its data in reads of at most n bytes.
type chunkReader struct {
	data []byte
	n    int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	k := min(r.n, len(p), len(r.data))
	copy(p, r.data[:k])
	r.data = r.data[k:]
	return k, nil
}

func (*chunkReader) Close() error { return nil }

// FuzzWatchMethod checks that the watcher passes the body through
// unchanged and sees every occurrence of the method, however the body is
// cut into reads.
func FuzzWatchMethod(f *testing.F) {
	const method = "notifications/groups/list_changed"
	note := `data: {"jsonrpc":"2.0","method":"` + method + `"}` + "\n\n"
	f.Add([]byte(note), 1)
	f.Add([]byte(note+note), 7)
	f.Add([]byte(`{"method":"`+method+`"`), 1000)
	f.Add([]byte(`"`+method+`"`+method+`"`), 3)
	f.Add([]byte(`{"method":"notifications/tools/list_changed"}`), 5)
	f.Fuzz(func(t *testing.T, body []byte, chunk int) {
		if chunk <= 0 || chunk > 1<<16 {
			chunk = 1
		}
		found := 0
		w := sdkshim.WatchMethod(&chunkReader{data: slices.Clone(body), n: chunk}, method, func() { found++ })
		out, err := io.ReadAll(w)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, body) {
			t.Fatalf("the body changed on the way through")
		}
		if want := bytes.Count(body, []byte(`"`+method+`"`)); found != want {
			t.Errorf("found %d, want %d", found, want)
		}
	})
}
