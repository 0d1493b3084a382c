import { useState } from "react";
import { api, orThrow } from "../api";
import { ActionForm, Field } from "../components/ui";
import { useLoad } from "../hooks";
import { navigate, routeQuery } from "../router";

/** Sign-in, sign-up, password reset and address verification: the screens before a session exists. */
export function AuthScreen(props: { mode: string; onSignedIn: () => void }) {
  return (
    <main className="auth">
      <h1 className="brand">Herald</h1>
      {props.mode === "signup" ? (
        <SignUp onSignedIn={props.onSignedIn} />
      ) : props.mode === "forgot" ? (
        <Forgot />
      ) : props.mode === "reset-password" ? (
        <Reset />
      ) : props.mode === "verify-email" ? (
        <Verify onSignedIn={props.onSignedIn} />
      ) : (
        <LogIn onSignedIn={props.onSignedIn} />
      )}
    </main>
  );
}

function OAuthButtons() {
  const providers = useLoad(async () => orThrow(await api.GET("/auth/oauth-config")).data.providers, []);
  const enabled = providers.data?.filter((provider) => provider.enabled) ?? [];
  if (enabled.length === 0) return null;
  return (
    <div className="oauth">
      {enabled.map((provider) => (
        <a key={provider.name} className="button secondary" href={provider.url}>
          Continue with {provider.name[0]?.toUpperCase()}
          {provider.name.slice(1)}
        </a>
      ))}
    </div>
  );
}

function LogIn(props: { onSignedIn: () => void }) {
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  return (
    <>
      <h2>Sign in</h2>
      <ActionForm
        submit="Sign in"
        action={async () => {
          orThrow(await api.POST("/auth/login", { body: { email, password } }));
          props.onSignedIn();
        }}
      >
        <Field label="Email" type="email" value={email} onChange={setEmail} required autoComplete="username" />
        <Field label="Password" type="password" value={password} onChange={setPassword} required autoComplete="current-password" />
      </ActionForm>
      <OAuthButtons />
      <p>
        <a href="#/signup">Create an account</a> · <a href="#/forgot">Forgot your password?</a>
      </p>
    </>
  );
}

function SignUp(props: { onSignedIn: () => void }) {
  const [name, setName] = useState("");
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  return (
    <>
      <h2>Create an account</h2>
      <ActionForm
        submit="Sign up"
        action={async () => {
          orThrow(await api.POST("/auth/signup", { body: { email, password, ...(name ? { name } : {}) } }));
          props.onSignedIn();
        }}
      >
        <Field label="Name" value={name} onChange={setName} autoComplete="name" />
        <Field label="Email" type="email" value={email} onChange={setEmail} required autoComplete="email" />
        <Field label="Password" type="password" value={password} onChange={setPassword} required autoComplete="new-password" />
      </ActionForm>
      <OAuthButtons />
      <p>
        <a href="#/login">I have an account</a>
      </p>
    </>
  );
}

function Forgot() {
  const [email, setEmail] = useState("");
  const [sent, setSent] = useState(false);
  return (
    <>
      <h2>Reset your password</h2>
      {sent ? (
        <p role="status">If an account has this address, an email with a reset link is on its way.</p>
      ) : (
        <ActionForm
          submit="Send the reset link"
          action={async () => {
            orThrow(await api.POST("/auth/request-password-reset", { body: { email } }));
            setSent(true);
          }}
        >
          <Field label="Email" type="email" value={email} onChange={setEmail} required autoComplete="email" />
        </ActionForm>
      )}
      <p>
        <a href="#/login">Back to sign-in</a>
      </p>
    </>
  );
}

function Reset() {
  const [password, setPassword] = useState("");
  const [done, setDone] = useState(false);
  const token = routeQuery().get("token") ?? "";
  return (
    <>
      <h2>Choose a new password</h2>
      {done ? (
        <p role="status">
          Your password is changed. <a href="#/login">Sign in</a>
        </p>
      ) : (
        <ActionForm
          submit="Change the password"
          action={async () => {
            orThrow(await api.POST("/auth/reset-password", { body: { token, password } }));
            setDone(true);
          }}
        >
          <Field label="New password" type="password" value={password} onChange={setPassword} required autoComplete="new-password" />
        </ActionForm>
      )}
    </>
  );
}

function Verify(props: { onSignedIn: () => void }) {
  const token = routeQuery().get("token") ?? "";
  const verified = useLoad(async () => orThrow(await api.POST("/auth/verify-email", { body: { token } })).data, [token]);
  return (
    <>
      <h2>Verify your address</h2>
      {verified.loading ? <p>Checking the link…</p> : null}
      {verified.error ? (
        <p className="error" role="alert">
          {verified.error}
        </p>
      ) : null}
      {verified.data ? (
        <p role="status">
          Your address is verified.{" "}
          <button
            type="button"
            onClick={() => {
              navigate("/");
              props.onSignedIn();
            }}
          >
            Continue
          </button>
        </p>
      ) : null}
    </>
  );
}
