package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/toolfold/toolfold/internal/config"
)

// introspector asks the issuer whether an opaque token is active (RFC 7662).
// Answers are not kept: each request asks again, so a revoked token stops
// working at once.
type introspector struct {
	cfg config.IntrospectionConfig
	s   *Server
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

// check introspects a token. The answer must say active, and when it names
// an issuer or an audience, they must be ours.
func (in *introspector) check(ctx context.Context, token string) (*Caller, *Error) {
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
	c := in.s.callerOf(answer, iss)
	if !c.Expires.IsZero() && !c.Expires.After(in.s.opts.Now()) {
		return nil, invalid(nil, "the token expired at %s; get a new one", c.Expires.UTC().Format("2006-01-02T15:04:05Z"))
	}
	return c, nil
}
