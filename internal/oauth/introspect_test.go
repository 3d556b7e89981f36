package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolfold/toolfold/internal/oauth/oauthtest"
)

// clock is a time a test moves by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// TestIntrospectionLimits: tokens the provider refused are refused again
// without asking until RefusedFor has passed; past the rate, tokens are
// refused with 503 and Retry-After without asking; active tokens are asked
// about every time.
func TestIntrospectionLimits(t *testing.T) {
	p := oauthtest.New(t)
	clk := &clock{t: time.Now()}
	var asked atomic.Int32
	p.Introspect = func(token string) map[string]any {
		asked.Add(1)
		if token == "good" {
			return map[string]any{"active": true, "sub": "bob", "aud": resource, "groups": []string{"docs-team"}, "exp": float64(clk.Now().Add(time.Hour).Unix())}
		}
		return map[string]any{"active": false}
	}
	s := newServerWith(t, p, nil, &Options{Now: clk.Now, Introspection: IntrospectionLimits{PerSecond: 1, Burst: 2, RefusedFor: 30 * time.Second}})
	steps := []struct {
		name    string
		advance time.Duration
		token   string
		status  int // 0: accepted
		asked   int32
	}{
		{"first junk token asks", 0, "junk-1", 401, 1},
		{"second junk token asks", 0, "junk-2", 401, 2},
		{"burst spent: refused without asking", 0, "junk-3", 503, 2},
		{"a refused token is remembered, past the rate", 0, "junk-1", 401, 2},
		{"a second later, a good token asks", time.Second, "good", 0, 3},
		{"and asks again: active answers are not kept", time.Second, "good", 0, 4},
		{"the second's request spent, refused", 0, "junk-3", 503, 4},
		{"a second later it asks", time.Second, "junk-3", 401, 5},
		{"after RefusedFor, a refused token asks again", 30 * time.Second, "junk-1", 401, 6},
		{"and is remembered again", 0, "junk-1", 401, 6},
	}
	for _, st := range steps {
		clk.Add(st.advance)
		_, err := s.Verify(context.Background(), st.token)
		var e *Error
		switch {
		case st.status == 0 && err != nil:
			t.Errorf("%s: refused: %v", st.name, err)
		case st.status != 0 && (!errors.As(err, &e) || e.Status != st.status):
			t.Errorf("%s: got %v, want %d", st.name, err, st.status)
		case st.status == 503 && (ceilSeconds(e.RetryAfter) != 1 || !strings.Contains(e.Message, "at a rate of 1 a second")):
			t.Errorf("%s: Retry-After %v, message %q", st.name, e.RetryAfter, e.Message)
		}
		if got := asked.Load(); got != st.asked {
			t.Errorf("%s: the provider was asked %d times in all, want %d", st.name, got, st.asked)
		}
	}
}

// TestIntrospectionRefusedMax: the refusals kept stay within RefusedMax.
func TestIntrospectionRefusedMax(t *testing.T) {
	p := oauthtest.New(t)
	p.Introspect = func(string) map[string]any { return map[string]any{"active": false} }
	s := newServerWith(t, p, nil, &Options{Introspection: IntrospectionLimits{RefusedMax: 3}})
	for i := range 10 {
		if _, err := s.Verify(context.Background(), fmt.Sprintf("junk-%d", i)); err == nil {
			t.Fatal("a junk token was accepted")
		}
	}
	s.intro.mu.Lock()
	n := len(s.intro.refused)
	s.intro.mu.Unlock()
	if n > 3 {
		t.Errorf("%d refusals kept, RefusedMax is 3", n)
	}
}

// TestIntrospectionInFlight: with InFlight questions waiting on the
// provider, one more is refused at once with 503, without asking.
func TestIntrospectionInFlight(t *testing.T) {
	p := oauthtest.New(t)
	entered, release := make(chan string), make(chan struct{})
	var asked atomic.Int32
	p.Introspect = func(token string) map[string]any {
		asked.Add(1)
		if strings.HasPrefix(token, "slow") {
			entered <- token
			<-release
		}
		return map[string]any{"active": false}
	}
	s := newServerWith(t, p, nil, &Options{Introspection: IntrospectionLimits{InFlight: 2}})
	var wg sync.WaitGroup
	for _, tok := range []string{"slow-1", "slow-2"} {
		wg.Go(func() { s.Verify(context.Background(), tok) })
	}
	<-entered
	<-entered
	_, err := s.Verify(context.Background(), "third")
	var e *Error
	if !errors.As(err, &e) || e.Status != http.StatusServiceUnavailable || e.RetryAfter <= 0 || !strings.Contains(e.Message, "2 questions") {
		t.Errorf("a third question while two wait: %v", err)
	}
	if asked.Load() != 2 {
		t.Errorf("the provider was asked %d times, want 2", asked.Load())
	}
	close(release)
	wg.Wait()
	if _, err := s.Verify(context.Background(), "third"); !errors.As(err, &e) || e.Status != http.StatusUnauthorized {
		t.Errorf("once the two are answered, a third: %v", err)
	}
}
