package oauth

import (
	"context"
	"fmt"

	"github.com/MicahParks/jwkset"
)

// keyStore holds one issuer's key set for keyfunc. It refuses a set of more
// than maxJWKSKeys keys, and the previous set stays.
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
