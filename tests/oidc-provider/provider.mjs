// A real OpenID provider for Tunnel2's single sign-on tests (tests/Tunnel2.EndToEndTests/Access/OidcLoginTests.cs):
// the npm package oidc-provider with its development login pages (any login name, any password; the login name is
// the account's email). Not for deployment.
//
//   node provider.mjs <client-id> <client-secret>
//
// Listens on a free loopback port and prints "listening <issuer>" once it takes requests. Any redirect URI on
// 127.0.0.1 or *.apps.test is allowed (the tunnel's public port is only known later).
import http from 'node:http';
import Provider from 'oidc-provider';

const [clientId, clientSecret] = process.argv.slice(2);
const server = http.createServer();
server.listen(0, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(issuer, {
    clients: [{
      client_id: clientId,
      client_secret: clientSecret,
      redirect_uris: ['http://127.0.0.1/placeholder'],
      response_types: ['code'],
      grant_types: ['authorization_code'],
      token_endpoint_auth_method: 'client_secret_post',
    }],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], groups: ['groups'] },
    conformIdTokenClaims: false, // the claims in the ID token, as Google's and Entra's are
    findAccount: async (ctx, id) => ({
      accountId: id,
      claims: async () => ({
        sub: id, email: id, email_verified: true, groups: id.startsWith('admin') ? ['admins'] : ['staff'],
      }),
    }),
    cookies: { keys: ['tunnel2-test-provider-cookie-key'] },
    features: { devInteractions: { enabled: true } },
    pkce: { required: () => true }, // a login without PKCE fails, so the browser test shows the tunnel uses it
  });
  provider.Client.prototype.redirectUriAllowed = function allowed(uri) {
    const { hostname } = new URL(uri);
    return hostname === '127.0.0.1' || hostname.endsWith('.apps.test'); // path mode, and host mode under *.apps.test
  };
  server.on('request', provider.callback());
  console.log(`listening ${issuer}`);
});
