import { z } from "zod";
import { codeRejected, fetchProviderJson, type OAuthProvider } from "./oauth-provider.js";

const tokenAnswer = z.object({ access_token: z.string().min(1) });
const userInfo = z.object({
  sub: z.string().min(1),
  email: z.string().optional(),
  email_verified: z.boolean().optional(),
  name: z.string().optional(),
});

/** Google's OpenID Connect code flow: the authorize page, the token endpoint, then userinfo. */
export function createGoogleProvider(options: {
  clientId: string;
  clientSecret: string;
  oauthUrl: string;
  tokenUrl: string;
  userInfoUrl: string;
  timeoutMs: number;
}): OAuthProvider {
  const { timeoutMs } = options;
  return {
    name: "google",
    authorizeUrl(redirectUri, state) {
      const url = new URL(`${options.oauthUrl.replace(/\/$/, "")}/o/oauth2/v2/auth`);
      url.search = new URLSearchParams({
        client_id: options.clientId,
        redirect_uri: redirectUri,
        response_type: "code",
        scope: "openid email profile",
        state,
      }).toString();
      return url.toString();
    },
    async exchange(code, redirectUri) {
      const token = tokenAnswer.safeParse(
        await fetchProviderJson("Google", options.tokenUrl, {
          method: "POST",
          headers: { accept: "application/json", "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({
            client_id: options.clientId,
            client_secret: options.clientSecret,
            code,
            redirect_uri: redirectUri,
            grant_type: "authorization_code",
          }),
          timeoutMs,
        }),
      );
      if (!token.success) throw codeRejected("Google", "unexpected token answer");
      const info = userInfo.safeParse(
        await fetchProviderJson("Google", options.userInfoUrl, {
          headers: { accept: "application/json", authorization: `Bearer ${token.data.access_token}` },
          timeoutMs,
        }),
      );
      if (!info.success) throw codeRejected("Google", "unexpected profile answer");
      return {
        providerAccountId: info.data.sub,
        verifiedEmail: info.data.email && info.data.email_verified === true ? info.data.email.trim().toLowerCase() : undefined,
        name: info.data.name ?? "",
      };
    },
  };
}
