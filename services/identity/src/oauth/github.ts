import { z } from "zod";
import { codeRejected, fetchProviderJson, type OAuthProvider } from "./oauth-provider.js";

const tokenAnswer = z.union([
  z.object({ access_token: z.string().min(1) }),
  z.object({ error: z.string(), error_description: z.string().optional() }),
]);
const githubUser = z.object({ id: z.number().or(z.string()), login: z.string(), name: z.string().nullable().optional() });
const githubEmails = z.array(z.object({ email: z.string(), primary: z.boolean(), verified: z.boolean() }));

/** GitHub's OAuth app flow: the authorize page, the token endpoint, then /user and /user/emails. */
export function createGithubProvider(options: {
  clientId: string;
  clientSecret: string;
  oauthUrl: string;
  apiUrl: string;
  timeoutMs: number;
}): OAuthProvider {
  const { timeoutMs } = options;
  const base = options.oauthUrl.replace(/\/$/, "");
  const api = options.apiUrl.replace(/\/$/, "");
  return {
    name: "github",
    authorizeUrl(redirectUri, state) {
      const url = new URL(`${base}/login/oauth/authorize`);
      url.search = new URLSearchParams({
        client_id: options.clientId,
        redirect_uri: redirectUri,
        scope: "read:user user:email",
        state,
      }).toString();
      return url.toString();
    },
    async exchange(code, redirectUri) {
      const answer = tokenAnswer.safeParse(
        await fetchProviderJson("GitHub", `${base}/login/oauth/access_token`, {
          method: "POST",
          headers: { accept: "application/json", "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ client_id: options.clientId, client_secret: options.clientSecret, code, redirect_uri: redirectUri }),
          timeoutMs,
        }),
      );
      // GitHub answers a bad code with 200 and an error field.
      if (!answer.success) throw codeRejected("GitHub", "unexpected token answer");
      if ("error" in answer.data) throw codeRejected("GitHub", answer.data.error);
      const headers = {
        accept: "application/vnd.github+json",
        authorization: `Bearer ${answer.data.access_token}`,
        "user-agent": "herald",
      };
      const [user, emails] = await Promise.all([
        fetchProviderJson("GitHub", `${api}/user`, { headers, timeoutMs }),
        fetchProviderJson("GitHub", `${api}/user/emails`, { headers, timeoutMs }),
      ]);
      const profile = githubUser.safeParse(user);
      const addresses = githubEmails.safeParse(emails);
      if (!profile.success || !addresses.success) throw codeRejected("GitHub", "unexpected profile answer");
      const primary = addresses.data.find((address) => address.primary && address.verified);
      return {
        providerAccountId: String(profile.data.id),
        verifiedEmail: primary?.email.trim().toLowerCase(),
        name: profile.data.name ?? profile.data.login,
      };
    },
  };
}
