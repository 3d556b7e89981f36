package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/MicahParks/keyfunc/v3"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/time/rate"
)

// retryAfter is how long a failed discovery is not tried again, so a
// provider that is down is not asked on every request.
const retryAfter = 10 * time.Second

// issuer is one authorization server: its metadata and keys, fetched on
// first use and kept.
type issuer struct {
	url string
	s   *Server

	mu      sync.Mutex
	meta    *oauthex.AuthServerMeta
	kf      keyfunc.Keyfunc
	failed  time.Time
	lastErr error
	// stopKeys ends the key set's refresh goroutine; Server.Close ends it too.
	stopKeys context.CancelFunc
}

// keys returns the issuer's key set, discovering it on first use.
func (is *issuer) keys(ctx context.Context) (keyfunc.Keyfunc, error) {
	is.mu.Lock()
	defer is.mu.Unlock()
	if is.kf != nil {
		return is.kf, nil
	}
	if now := is.s.opts.Now(); !is.failed.IsZero() && now.Sub(is.failed) < retryAfter {
		return nil, is.lastErr
	}
	kf, meta, err := is.discover(ctx)
	if err != nil {
		is.failed, is.lastErr = is.s.opts.Now(), err
		is.s.log.Warn("cannot fetch an OAuth issuer's keys", "issuer", is.url, "err", err)
		return nil, err
	}
	is.kf, is.meta = kf, meta
	is.s.log.Info("fetched an OAuth issuer's keys", "issuer", is.url, "jwks", meta.JWKSURI)
	return kf, nil
}

// metadata returns the issuer's metadata, discovering it if needed.
func (is *issuer) metadata(ctx context.Context) (*oauthex.AuthServerMeta, error) {
	if _, err := is.keys(ctx); err != nil {
		return nil, err
	}
	is.mu.Lock()
	defer is.mu.Unlock()
	return is.meta, nil
}

// discover fetches the metadata and keys; the caller holds is.mu.
func (is *issuer) discover(ctx context.Context) (keyfunc.Keyfunc, *oauthex.AuthServerMeta, error) {
	meta, err := is.fetchMetadata(ctx)
	if err != nil {
		return nil, nil, err
	}
	if meta.JWKSURI == "" {
		return nil, nil, fmt.Errorf("the metadata of %s names no jwks_uri", is.url)
	}
	refresh := is.s.cfg.JWKSRefresh.Std()
	if refresh <= 0 {
		refresh = time.Hour
	}
	// keyfunc's NewDefaultOverrideCtx reads the key set through storage it
	// makes itself and decodes any body whole. Built by hand from the same
	// jwkset parts, the body goes through a client that stops at
	// maxJWKSBytes and the keys into a store that stops at maxJWKSKeys.
	ctx, stop := context.WithCancel(is.s.ctx)
	store, err := jwkset.NewStorageFromHTTP(meta.JWKSURI, jwkset.HTTPClientStorageOptions{
		Client:          boundedClient(is.s.opts.Client, maxJWKSBytes),
		Ctx:             ctx,
		HTTPTimeout:     10 * time.Second,
		RefreshInterval: refresh,
		Storage:         newKeyStore(meta.JWKSURI),
		RefreshErrorHandler: func(ctx context.Context, err error) {
			is.s.log.Warn("cannot refresh an OAuth issuer's keys", "issuer", is.url, "jwks", meta.JWKSURI, "err", err)
		},
	})
	if err != nil {
		stop() // ends the refresh goroutine of a set that never loaded
		var lim *limitError
		if errors.As(err, &lim) {
			return nil, nil, fmt.Errorf("fetching its keys: %w", lim)
		}
		return nil, nil, fmt.Errorf("fetching its keys from %s: %w", meta.JWKSURI, err)
	}
	client, err := jwkset.NewHTTPClient(jwkset.HTTPClientOptions{
		HTTPURLs: map[string]jwkset.Storage{meta.JWKSURI: store},
		// A token naming an unknown key refreshes the set at once, then
		// not again for a minute; a request that would have to wait
		// longer than RateLimitWaitMax for its turn fails at once.
		RefreshUnknownKID: rate.NewLimiter(rate.Every(time.Minute), 1),
		RateLimitWaitMax:  10 * time.Second,
	})
	if err != nil {
		stop()
		return nil, nil, fmt.Errorf("keeping the keys of %s: %w", meta.JWKSURI, err)
	}
	kf, err := keyfunc.New(keyfunc.Options{Ctx: ctx, Storage: client})
	if err != nil {
		stop()
		return nil, nil, fmt.Errorf("keeping the keys of %s: %w", meta.JWKSURI, err)
	}
	is.stopKeys = stop
	return kf, meta, nil
}

// fetchMetadata reads the issuer's metadata: RFC 8414's well-known URL
// first, then OpenID discovery's. Its issuer must be the configured one.
func (is *issuer) fetchMetadata(ctx context.Context) (*oauthex.AuthServerMeta, error) {
	u, err := url.Parse(is.url)
	if err != nil {
		return nil, err
	}
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	candidates := []string{
		u.Scheme + "://" + u.Host + "/.well-known/oauth-authorization-server" + path,
		strings.TrimSuffix(is.url, "/") + "/.well-known/openid-configuration",
	}
	var errs []error
	for _, c := range candidates {
		meta, err := is.getMeta(ctx, c)
		if err == nil {
			return meta, nil
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("no usable metadata: %w", errors.Join(errs...))
}

func (is *issuer) getMeta(ctx context.Context, at string) (*oauthex.AuthServerMeta, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, at, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := is.s.opts.Client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", at, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s answered %s", at, resp.Status)
	}
	var meta oauthex.AuthServerMeta
	if err := json.NewDecoder(newBoundedBody(resp.Body, maxMetadataBytes, at)).Decode(&meta); err != nil {
		var lim *limitError
		if errors.As(err, &lim) {
			return nil, err
		}
		return nil, fmt.Errorf("%s: not JSON metadata: %w", at, err)
	}
	if strings.TrimSuffix(meta.Issuer, "/") != strings.TrimSuffix(is.url, "/") {
		return nil, fmt.Errorf("%s names the issuer %q, not %q (RFC 8414 §3.3 requires them to be the same)", at, meta.Issuer, is.url)
	}
	return &meta, nil
}
