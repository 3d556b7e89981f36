package oauth

import (
	"context"
	"fmt"
	"slices"

	"github.com/MicahParks/jwkset"
)

// keyStore holds one issuer's key set for keyfunc. It refuses a set of more
// than maxJWKSKeys keys (the previous set stays), and hands out only keys
// that may verify signatures: no "use", or "sig"; no "key_ops", or ones that
// include "verify". A key published for encryption must not vouch for a
// token, even if the signature would check.
type keyStore struct {
	*jwkset.MemoryJWKSet
	url string
}

func newKeyStore(url string) *keyStore {
	return &keyStore{MemoryJWKSet: jwkset.NewMemoryStorage(), url: url}
}

func (k *keyStore) KeyReplaceAll(ctx context.Context, given []jwkset.JWK) error {
	if len(given) > maxJWKSKeys {
		return &limitError{what: fmt.Sprintf("the key set at %s (%d keys)", k.url, len(given)), limit: fmt.Sprintf("%d keys", maxJWKSKeys)}
	}
	return k.MemoryJWKSet.KeyReplaceAll(ctx, given)
}

// KeyRead returns a verification key of that kid. A set may publish one kid
// twice, for signatures and for encryption, so each is looked at.
func (k *keyStore) KeyRead(ctx context.Context, kid string) (jwkset.JWK, error) {
	all, err := k.MemoryJWKSet.KeyReadAll(ctx)
	if err != nil {
		return jwkset.JWK{}, err
	}
	var refused error
	for _, j := range all {
		m := j.Marshal()
		if m.KID != kid {
			continue
		}
		if err := notForVerifying(m); err != nil {
			refused = err
			continue
		}
		return j, nil
	}
	if refused != nil {
		// Not ErrKeyNotFound: the set has the key, so refetching it would
		// not help.
		return jwkset.JWK{}, refused
	}
	// ErrKeyNotFound makes jwkset refetch the set (rate limited).
	return jwkset.JWK{}, fmt.Errorf("%w: kid %q", jwkset.ErrKeyNotFound, kid)
}

// KeyReadAll is what a token without kid is tried against.
func (k *keyStore) KeyReadAll(ctx context.Context) ([]jwkset.JWK, error) {
	all, err := k.MemoryJWKSet.KeyReadAll(ctx)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(j jwkset.JWK) bool { return notForVerifying(j.Marshal()) != nil }), nil
}

// keyUseError is a token whose key the issuer publishes, but not for
// verifying signatures.
type keyUseError struct {
	kid    string
	use    jwkset.USE
	keyOps []jwkset.KEYOPS
}

func (e *keyUseError) Error() string {
	return fmt.Sprintf("the key %q is %s", e.kid, e.reason())
}

// reason says how the key is published.
func (e *keyUseError) reason() string {
	if e.use != "" {
		return fmt.Sprintf("published for use %q, not for signatures (\"sig\")", e.use)
	}
	return fmt.Sprintf("published with key_ops %q, which do not include \"verify\"", e.keyOps)
}

func notForVerifying(m jwkset.JWKMarshal) error {
	if m.USE != "" && m.USE != jwkset.UseSig {
		return &keyUseError{kid: m.KID, use: m.USE}
	}
	if len(m.KEYOPS) > 0 && !slices.Contains(m.KEYOPS, jwkset.KeyOpsVerify) {
		return &keyUseError{kid: m.KID, keyOps: m.KEYOPS}
	}
	return nil
}
