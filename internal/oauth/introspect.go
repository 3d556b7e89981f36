package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/toolfold/toolfold/internal/config"
)

// IntrospectionLimits bound what tokens that are not JWTs cost the
// introspection endpoint: without them every junk token sent to toolfold
// is one request to the provider. Zero fields take the defaults.
type IntrospectionLimits struct {
	// PerSecond is the sustained rate of introspection requests; default 50.
	PerSecond float64
	// Burst is how many may go at once above that rate; default 100.
	Burst int
	// InFlight is how many may wait on the provider at once; default 16.
	InFlight int
	// RefusedFor is how long a token the provider refused is refused
	// without asking again; default 30 s.
	RefusedFor time.Duration
	// RefusedMax is how many refused tokens are remembered; default 10000.
	RefusedMax int
}

func (l IntrospectionLimits) withDefaults() IntrospectionLimits {
	if l.PerSecond <= 0 {
		l.PerSecond = 50
	}
	if l.Burst <= 0 {
		l.Burst = 100
	}
	if l.InFlight <= 0 {
		l.InFlight = 16
	}
	if l.RefusedFor <= 0 {
		l.RefusedFor = 30 * time.Second
	}
	if l.RefusedMax <= 0 {
		l.RefusedMax = 10000
	}
	return l
}

// introspector asks the issuer whether an opaque token is active (RFC 7662).
// An active answer is not kept: each request asks again, so a revoked token
// stops working at once. A refusal is kept for a while under the token's
// SHA-256 (never the token), since a token the provider refused does not
// become valid; the rate limit and the in-flight bound cap the rest.
type introspector struct {
	cfg     config.IntrospectionConfig
	s       *Server
	lim     IntrospectionLimits
	limiter *rate.Limiter
	slots   chan struct{}

	mu      sync.Mutex
	refused map[[sha256.Size]byte]refusal
}

type refusal struct {
	until time.Time
	err   Error
}

func newIntrospector(cfg config.IntrospectionConfig, s *Server, lim IntrospectionLimits) *introspector {
	lim = lim.withDefaults()
	return &introspector{
		cfg:     cfg,
		s:       s,
		lim:     lim,
		limiter: rate.NewLimiter(rate.Limit(lim.PerSecond), lim.Burst),
		slots:   make(chan struct{}, lim.InFlight),
		refused: map[[sha256.Size]byte]refusal{},
	}
}

// check answers from the refusals kept, or asks the provider if the limits
// allow.
func (in *introspector) check(ctx context.Context, token string) (*Caller, *Error) {
	key := sha256.Sum256([]byte(token))
	now := in.s.opts.Now()
	if e := in.recall(key, now); e != nil {
		return nil, e
	}
	// A full house is refused at once rather than queued: queued requests
	// would hold connections for as long as the provider is slow.
	select {
	case in.slots <- struct{}{}:
		defer func() { <-in.slots }()
	default:
		return nil, in.busy(fmt.Sprintf("%d questions to the authorization server about tokens that are not JWTs are already waiting for answers", in.lim.InFlight), time.Second)
	}
	r := in.limiter.ReserveN(now, 1)
	if wait := r.DelayFrom(now); wait > 0 {
		r.CancelAt(now)
		return nil, in.busy(fmt.Sprintf("toolfold asks the authorization server about tokens that are not JWTs at most at a rate of %g a second, and the rate is spent", in.lim.PerSecond), wait)
	}
	c, e := in.ask(ctx, token)
	if e != nil && e.Status == http.StatusUnauthorized {
		in.remember(key, e, now)
	}
	return c, e
}

// busy is a refusal for a limit of toolfold's own. 503, not 429: the limits
// are shared by all callers, so the caller who meets one is not the one
// who sent too much.
func (in *introspector) busy(why string, wait time.Duration) *Error {
	return &Error{
		Status:     http.StatusServiceUnavailable,
		Message:    fmt.Sprintf("toolfold cannot check the token now: %s; try again in %d s. A JWT access token is checked without asking", why, ceilSeconds(wait)),
		RetryAfter: wait,
	}
}

// ceilSeconds is d in whole seconds, rounded up, at least 1: the unit of
// Retry-After.
func ceilSeconds(d time.Duration) int {
	return max(1, int((d+time.Second-1)/time.Second))
}

func (in *introspector) recall(key [sha256.Size]byte, now time.Time) *Error {
	in.mu.Lock()
	defer in.mu.Unlock()
	r, ok := in.refused[key]
	if !ok {
		return nil
	}
	if !now.Before(r.until) {
		delete(in.refused, key)
		return nil
	}
	e := r.err
	return &e
}

func (in *introspector) remember(key [sha256.Size]byte, e *Error, now time.Time) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if len(in.refused) >= in.lim.RefusedMax {
		for k, r := range in.refused {
			if !now.Before(r.until) {
				delete(in.refused, k)
			}
		}
	}
	// Still full: forget arbitrary ones. The rate limit keeps this rare
	// (at 50 a second for 30 s, 1500 entries).
	for k := range in.refused {
		if len(in.refused) < in.lim.RefusedMax {
			break
		}
		delete(in.refused, k)
	}
	in.refused[key] = refusal{until: now.Add(in.lim.RefusedFor), err: *e}
}

func (in *introspector) endpoint(ctx context.Context) (string, error) {
	if in.cfg.Endpoint != "" {
		return in.cfg.Endpoint, nil
	}
	meta, err := in.s.issuers[in.s.cfg.Issuers[0]].metadata(ctx)
	if err != nil {
		return "", err
	}
	if meta.IntrospectionEndpoint == "" {
		return "", fmt.Errorf("the metadata of %s names no introspection_endpoint; set http.auth.oauth.introspection.endpoint", in.s.cfg.Issuers[0])
	}
	return meta.IntrospectionEndpoint, nil
}

// ask introspects a token. The answer must say active, and when it names
// an issuer or an audience, they must be ours. A 401 is the provider's
// verdict on the token; a 503 is a failure to get one.
func (in *introspector) ask(ctx context.Context, token string) (*Caller, *Error) {
	unavailable := func(err error) *Error {
		return &Error{Status: http.StatusServiceUnavailable, Message: fmt.Sprintf("toolfold cannot ask the authorization server about the token: %v; try again shortly", err), err: err}
	}
	at, err := in.endpoint(ctx)
	if err != nil {
		return nil, unavailable(err)
	}
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, at, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, unavailable(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(url.QueryEscape(in.cfg.ClientID), url.QueryEscape(string(in.cfg.ClientSecret)))
	resp, err := in.s.opts.Client.Do(req)
	if err != nil {
		return nil, unavailable(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, unavailable(fmt.Errorf("%s answered %s (check http.auth.oauth.introspection's client credentials)", at, resp.Status))
	}
	var answer map[string]any
	if err := json.NewDecoder(newBoundedBody(resp.Body, maxIntrospectionBytes, at)).Decode(&answer); err != nil {
		var lim *limitError
		if errors.As(err, &lim) {
			return nil, unavailable(err)
		}
		return nil, unavailable(fmt.Errorf("%s: not a JSON answer: %w", at, err))
	}
	if active, _ := answer["active"].(bool); !active {
		return nil, invalid(nil, "the authorization server says the token is not active (expired, revoked or unknown); get a new one")
	}
	iss, _ := answer["iss"].(string)
	if iss == "" {
		iss = in.s.cfg.Issuers[0]
	} else if _, ok := in.s.issuers[iss]; !ok {
		return nil, invalid(nil, "the token was issued by %q, which is not one of http.auth.oauth.issuers", iss)
	}
	// The MCP authorization spec requires the audience check: a token the
	// server cannot tell was meant for it is refused, aud or not.
	if aud := stringList(answer["aud"]); !oauthexMatches(aud, in.s) {
		return nil, invalid(nil, "the token's audience %q is not this toolfold (%s); ask for a token with resource=%s (RFC 8707)", aud, in.s.cfg.Resource, in.s.cfg.Resource)
	}
	if e := readableTimes(answer); e != nil {
		return nil, e
	}
	c := in.s.callerOf(answer, iss)
	if !c.Expires.IsZero() && !c.Expires.After(in.s.opts.Now()) {
		return nil, invalid(nil, "the token expired at %s; get a new one", c.Expires.UTC().Format("2006-01-02T15:04:05Z"))
	}
	return c, nil
}
