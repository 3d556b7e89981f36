package rawcall

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestMembers(t *testing.T) {
	tests := []struct {
		name string
		obj  string
		want string // key=value pairs joined by |, or "error"
	}{
		{"empty", ` {} `, ""},
		{"flat", `{"a":1,"b":"x","c":true,"d":null}`, `a=1|b="x"|c=true|d=null`},
		{"nested values stay whole", `{"p":{"x":[1,{"y":"}"}]},"q":[]}`, `p={"x":[1,{"y":"}"}]}|q=[]`},
		{"escapes in strings", `{"k\"e":"v\\","n":"a\"}"}`, `k\"e="v\\"|n="a\"}"`},
		{"white space", "{ \"a\" :\t-1.5e3 ,\n\"b\": [ ] }", `a=-1.5e3|b=[ ]`},
		{"not an object", `[1]`, "error"},
		{"unterminated", `{"a":1`, "error"},
		{"trailing bytes", `{"a":1} x`, "error"},
		{"missing colon", `{"a" 1}`, "error"},
		{"bare word", `{"a":}`, "error"},
		{"control byte in a string", "{\"a\":\"x\x01\"}", "error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			err := Members([]byte(tt.obj), func(k, v []byte) bool {
				got = append(got, string(k)+"="+string(v))
				return true
			})
			if tt.want == "error" {
				if err == nil {
					t.Errorf("Members(%q) succeeded with %q, want an error", tt.obj, got)
				}
				return
			}
			if err != nil || strings.Join(got, "|") != tt.want {
				t.Errorf("Members(%q) = %q, %v; want %q", tt.obj, strings.Join(got, "|"), err, tt.want)
			}
		})
	}
}

func TestMemberAndString(t *testing.T) {
	obj := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"s01__echo"}}`)
	if v := Member(obj, "id"); string(v) != "7" {
		t.Errorf("id = %q", v)
	}
	name, ok := String(Member(Member(obj, "params"), "name"))
	if !ok || name != "s01__echo" {
		t.Errorf("params.name = %q, %v", name, ok)
	}
	if v := Member(obj, "absent"); v != nil {
		t.Errorf("absent member = %q, want nil", v)
	}
	for _, v := range []string{`"a\nb"`, `"a\"b"`, `1`, `"`} {
		if _, ok := String([]byte(v)); ok {
			t.Errorf("String(%s) accepted a value it must leave to the typed path", v)
		}
	}
}

// FuzzMembers checks that on input encoding/json accepts as an object,
// the members found are the object's members, each value valid JSON; and
// that nothing panics on anything else.
func FuzzMembers(f *testing.F) {
	for _, seed := range []string{`{}`, `{"a":1}`, `{"a":{"b":[1,2,{"c":"}"}]},"d":"\\\""}`, `{"a":`, `[`, `{"a":tru}`, " {\"x\" : null } "} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var members []string
		err := Members(data, func(k, v []byte) bool {
			members = append(members, string(v))
			return true
		})
		var obj map[string]json.RawMessage
		if json.Unmarshal(data, &obj) != nil {
			return // not an object: the scanner may say anything but must not panic
		}
		if err != nil {
			t.Fatalf("Members refused a valid object %q: %v", data, err)
		}
		for _, v := range members {
			if !json.Valid([]byte(v)) {
				t.Fatalf("Members cut a value wrongly from %q: %q", data, v)
			}
		}
	})
}

// recorder is a Flusher that counts its flushes, logs them, and may fail:
// then its failure runs fail, as a writer fails the calls it held.
type recorder struct {
	name    string
	log     *[]string
	flushes int
	fail    func()
}

func (r *recorder) Flush() func() {
	r.flushes++
	if r.log != nil {
		*r.log = append(*r.log, "flush "+r.name)
	}
	return r.fail
}

// A batch flushes each writer held once, however often it was held, and
// only at its end; it is empty again after.
func TestBatchFlushesEachWriterOnceAtItsEnd(t *testing.T) {
	var b Batch
	a, c := &recorder{}, &recorder{}
	b.Hold(a)
	b.Hold(c)
	b.Hold(a)
	if a.flushes+c.flushes != 0 {
		t.Fatalf("writers flushed before the batch ended: %d, %d", a.flushes, c.flushes)
	}
	b.End()
	if a.flushes != 1 || c.flushes != 1 {
		t.Errorf("flushes at the end: %d, %d; want one each", a.flushes, c.flushes)
	}
	b.End()
	if a.flushes != 1 || c.flushes != 1 {
		t.Errorf("an empty batch's end flushed again: %d, %d", a.flushes, c.flushes)
	}
	b.Hold(c)
	b.End()
	if a.flushes != 1 || c.flushes != 2 {
		t.Errorf("the next batch flushed %d, %d; want only the writer it held", a.flushes, c.flushes)
	}
}

// A failed flush acts only once every writer held was flushed and the
// batch is empty: the calls it fails may have their answers held (here,
// for the same batch), and those go out before End returns, in a batch of
// their own, never inside the flush that failed.
func TestBatchHandlesFailedFlushesAfterItEnds(t *testing.T) {
	var b Batch
	var log []string
	answers := &recorder{name: "answers", log: &log}
	first := &recorder{name: "first", log: &log}
	second := &recorder{name: "second", log: &log}
	first.fail = func() {
		log = append(log, "fail first's calls")
		b.Hold(answers) // a failed call's answer, held
	}
	b.Hold(first)
	b.Hold(second)
	b.End()
	want := []string{"flush first", "flush second", "fail first's calls", "flush answers"}
	if !slices.Equal(log, want) {
		t.Errorf("End did %q, want %q", log, want)
	}
	log = nil
	first.fail = nil
	b.End()
	if len(log) != 0 {
		t.Errorf("the next End did %q, want nothing", log)
	}
}

// Head stops at the key it is told to, before its value: what follows
// is neither walked nor checked.
func TestHead(t *testing.T) {
	stopAtResult := func(k []byte) bool { return string(k) == "result" }
	for _, tc := range []struct {
		obj     string
		stopped string
		seen    string
		bad     bool
	}{
		{obj: `{"jsonrpc":"2.0","id":7,"result":not json at all`, stopped: "result", seen: "jsonrpc=\"2.0\" id=7 "},
		{obj: `{"id":"a","error":{"code":1}}`, seen: `id="a" error={"code":1} `},
		{obj: `{}`},
		{obj: `{"id":7,"error":{"code":1}`, seen: `id=7 error={"code":1} `, bad: true}, // no end
		{obj: `[1]`, bad: true},
	} {
		var seen strings.Builder
		stopped, err := Head([]byte(tc.obj), stopAtResult, func(k, v []byte) {
			seen.WriteString(string(k) + "=" + string(v) + " ")
		})
		if string(stopped) != tc.stopped || seen.String() != tc.seen || (err != nil) != tc.bad {
			t.Errorf("Head(%s) = %q, %v, saw %q; want %q, error %v, saw %q", tc.obj, stopped, err, seen.String(), tc.stopped, tc.bad, tc.seen)
		}
	}
}
