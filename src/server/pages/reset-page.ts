import { pageDocument, pageNonce, pagePolicy } from "./page-skeleton.js";

/**
 * The page a reset link opens, under the rules of page-skeleton.ts. The token never enters the
 * HTML: the script reads it from the address bar.
 */
const WORDING = {
  reset: {
    title: "Choose a new password",
    button: "Set the new password",
    done: "Your password was changed. You can now log in with it; every earlier session has ended.",
    noToken: "This link has no reset token. Ask for a new reset e-mail.",
    spent: "This link cannot be used: it was already used or it has expired. Ask for a new reset e-mail.",
  },
  invitation: {
    title: "Set your password",
    button: "Set your password",
    done: "Your password is set. You can now log in with your user name and this password.",
    noToken: "This link has no invitation token. Ask your administrator to send the invitation again.",
    spent:
      "This invitation cannot be used: it was already used, replaced by a newer one, or it has expired. Ask your administrator to send it again.",
  },
} as const;

const STYLE = `
  body { font: 16px/1.5 system-ui, sans-serif; max-width: 28rem; margin: 3rem auto; padding: 0 1rem; color: #1b1f24; }
  h1 { font-size: 1.4rem; }
  label { display: block; margin-top: 1rem; font-weight: 600; }
  input { width: 100%; box-sizing: border-box; padding: .5rem; font: inherit; border: 1px solid #8c959f; border-radius: 4px; }
  button { margin-top: 1.25rem; padding: .55rem 1.2rem; font: inherit; border: 0; border-radius: 4px; background: #0b57d0; color: #fff; cursor: pointer; }
  button:disabled { opacity: .6; }
  p.hint { color: #57606a; font-size: .9rem; }
  #result { margin-top: 1.25rem; padding: .75rem; border-radius: 4px; }
  #result:empty { display: none; }
  #result.ok { background: #dafbe1; border: 1px solid #1a7f37; }
  #result.error { background: #ffebe9; border: 1px solid #cf222e; }
`;

export type ResetPageVariant = keyof typeof WORDING;

/** The same page and PUT serve a reset link and an invitation; only the words differ. */
export function resetPage(variant: ResetPageVariant = "reset"): { html: string; csp: string } {
  const words = WORDING[variant];
  const nonce = pageNonce();
  const csp = pagePolicy(nonce, { script: true, connect: true });
  const html = pageDocument({
    nonce,
    title: words.title,
    style: STYLE,
    body: `<main>
<h1>${words.title}</h1>
<form id="reset" novalidate>
  <label for="password">New password</label>
  <input id="password" name="password" type="password" autocomplete="new-password" required minlength="1" aria-describedby="policy">
  <p class="hint" id="policy">Use a long passphrase (at least 15 characters) that you do not use anywhere else.</p>
  <label for="repeat">Repeat the new password</label>
  <input id="repeat" name="repeat" type="password" autocomplete="new-password" required>
  <button id="submit" type="submit">${words.button}</button>
</form>
<div id="result" role="status" aria-live="polite"></div>
</main>
<script nonce="${nonce}">
(() => {
  const form = document.getElementById("reset");
  const result = document.getElementById("result");
  const button = document.getElementById("submit");
  const token = new URLSearchParams(location.search).get("token") || "";
  const show = (kind, text) => { result.className = kind; result.textContent = text; };
  if (!token) show("error", ${JSON.stringify(words.noToken)});
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const newPassword = form.password.value;
    if (newPassword !== form.repeat.value) return show("error", "The two passwords differ.");
    button.disabled = true;
    show("", "");
    try {
      const response = await fetch(location.pathname, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ token, newPassword }),
      });
      if (response.status === 204) {
        form.hidden = true;
        return show("ok", ${JSON.stringify(words.done)});
      }
      const problem = await response.json().catch(() => ({}));
      if (problem.code === "invalid_reset_token") {
        form.hidden = true;
        return show("error", ${JSON.stringify(words.spent)});
      }
      show("error", problem.detail || "The password could not be changed (HTTP " + response.status + ").");
    } catch {
      show("error", "The server could not be reached. Try again.");
    } finally {
      button.disabled = false;
    }
  });
})();
</script>`,
  });
  return { html, csp };
}
