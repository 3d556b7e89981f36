// A real OpenID provider for toolfold's OAuth end-to-end tests, on loopback.
//
// It issues access tokens by the client credentials grant with a resource
// indicator (RFC 8707): the token is a JWT whose audience is the resource
// asked for. Each client stands for a caller whose claims differ ("groups"
// below), so the test can check that each sees only its own reach.
//
// Usage: node provider.mjs <port|0> <key-file>
//   The signing key (a private JWK) is read from key-file, or generated and
//   written there when the file does not exist, so a test can restart the
//   provider with another key on the same port (a rotated JWKS).
// Prints one JSON line {"issuer": "..."} on stdout once it listens.
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import Provider from 'oidc-provider';

const [portArg = '0', keyFile] = process.argv.slice(2);
if (!keyFile) {
  console.error('usage: node provider.mjs <port|0> <key-file>');
  process.exit(2);
}

let key;
if (existsSync(keyFile)) {
  key = JSON.parse(readFileSync(keyFile, 'utf8'));
} else {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  key = { ...privateKey.export({ format: 'jwk' }), kid: randomUUID(), alg: 'RS256', use: 'sig' };
  writeFileSync(keyFile, JSON.stringify(key), { mode: 0o600 });
}

// The callers: their secrets are test values, their claims differ.
const callers = {
  alice: { groups: ['docs'] },
  bob: { groups: ['code'] },
  admin: { groups: ['admins'] },
  // Same claims as alice, but its tokens expire after one second.
  brief: { groups: ['docs'] },
  // Same claims as bob, but its tokens are opaque: only introspection
  // (RFC 7662) tells what they are.
  carol: { groups: ['code'] },
  // toolfold itself, to authenticate at the introspection endpoint.
  toolfold: { groups: [] },
};

const server = http.createServer();
await new Promise((resolve) => server.listen(Number(portArg), '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

const provider = new Provider(issuer, {
  clients: Object.keys(callers).map((id) => ({
    client_id: id,
    client_secret: `${id}-secret`,
    grant_types: ['client_credentials'],
    redirect_uris: [],
    response_types: [],
    scope: 'tools:read tools:write',
  })),
  jwks: { keys: [key] },
  scopes: ['openid', 'offline_access', 'tools:read', 'tools:write'],
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    resourceIndicators: {
      enabled: true,
      // Any resource the client names becomes the token's audience, so the
      // test can ask for a token meant for another server.
      getResourceServerInfo: (ctx, resource, client) => ({
        scope: 'tools:read tools:write',
        audience: resource,
        accessTokenTTL: 600,
        ...(client.clientId === 'carol'
          ? { accessTokenFormat: 'opaque' }
          : { accessTokenFormat: 'jwt', jwt: { sign: { alg: 'RS256' } } }),
      }),
    },
  },
  ttl: {
    ClientCredentials: (ctx, token, client) => (client.clientId === 'brief' ? 1 : 600),
  },
  extraTokenClaims: (ctx, token) => {
    const caller = callers[token.clientId];
    return caller ? { groups: caller.groups } : undefined;
  },
});
provider.on('server_error', (ctx, err) => console.error('server_error', err));
server.on('request', provider.callback());

console.log(JSON.stringify({ issuer }));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
