// The small HTML pages a recipient sees after following a link in an email. Plain,
// self-contained (no scripts, no external assets), and every value escaped.

const escapes: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (char) => escapes[char] ?? char);

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<style>
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;background:#f6f7f9;color:#1f2328;margin:0;padding:48px 16px}
main{max-width:440px;margin:0 auto;background:#fff;border:1px solid #d8dee4;border-radius:8px;padding:32px}
h1{font-size:20px;margin:0 0 12px}p{line-height:1.5;margin:0 0 16px}
button{font:inherit;padding:8px 16px;border-radius:6px;border:1px solid #1f2328;background:#1f2328;color:#fff;cursor:pointer}
button.secondary{background:#fff;color:#1f2328}
</style>
</head>
<body><main>${body}</main></body>
</html>`;
}

const form = (action: string, label: string, fields: Record<string, string> = {}, secondary = false) =>
  `<form method="post" action="${escapeHtml(action)}">${Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join("")}<button type="submit"${secondary ? ' class="secondary"' : ""}>${escapeHtml(label)}</button></form>`;

/** GET of an unsubscribe link: a confirmation, so that a mail scanner following links unsubscribes nobody. */
export const confirmUnsubscribePage = (email: string, action: string) =>
  page(
    "Unsubscribe",
    `<h1>Unsubscribe</h1><p>Stop receiving marketing email at <strong>${escapeHtml(email)}</strong>?</p>${form(action, "Unsubscribe")}`,
  );

export const confirmSubscribePage = (email: string, action: string) =>
  page("Subscribe", `<h1>Subscribe</h1><p>Receive email at <strong>${escapeHtml(email)}</strong> again?</p>${form(action, "Subscribe")}`);

export const subscriptionDonePage = (email: string, subscribed: boolean, manageUrl: string) =>
  page(
    subscribed ? "Subscribed" : "Unsubscribed",
    subscribed
      ? `<h1>You are subscribed</h1><p><strong>${escapeHtml(email)}</strong> will receive our email again.</p><p><a href="${escapeHtml(manageUrl)}">Manage your subscription</a></p>`
      : `<h1>You are unsubscribed</h1><p><strong>${escapeHtml(email)}</strong> will no longer receive marketing email from us. Transactional email, such as receipts, still arrives.</p><p><a href="${escapeHtml(manageUrl)}">Changed your mind?</a></p>`,
  );

export const managePage = (email: string, subscribed: boolean, action: string) =>
  page(
    "Email preferences",
    `<h1>Email preferences</h1><p><strong>${escapeHtml(email)}</strong> is ${subscribed ? "subscribed to" : "unsubscribed from"} our email.</p>${
      subscribed ? form(action, "Unsubscribe", { action: "unsubscribe" }, true) : form(action, "Subscribe again", { action: "subscribe" })
    }`,
  );

export const linkNotFoundPage = () =>
  page("Link not valid", "<h1>This link is not valid</h1><p>It may be incomplete or no longer in use. Check the link in your email.</p>");
