import { describe, expect, it } from "vitest";
import { invitationEmail, quotedProjectName } from "./auth-email-content.js";

describe("the invitation email", () => {
  const invitation = (projectName: string) =>
    invitationEmail("https://herald.example", { projectName, inviterEmail: "ada@team.example", email: "bob@else.example" });

  it("has a fixed subject whatever the project is called", () => {
    expect(invitation("Verify payroll at evil.example").subject).toBe("You are invited to a project on Herald");
    expect(invitation("Acme").subject).toBe("You are invited to a project on Herald");
  });

  it("quotes the name last, under a line that labels it, after Herald's words and the link", () => {
    const { text } = invitation("Verify payroll at evil.example");
    const lines = text.trimEnd().split("\n");
    expect(lines.slice(-2)).toEqual([
      "Project name, as written by the person who invited you (not by Herald):",
      '"Verify payroll at evil.example"',
    ]);
    expect(lines.filter((line) => line.includes("payroll"))).toHaveLength(1);
    expect(text.indexOf("https://herald.example/auth/signup?email=bob%40else.example")).toBeLessThan(text.indexOf("payroll"));
  });

  it("keeps the name on one line, without control, bidi or zero-width characters, and short", () => {
    expect(quotedProjectName("Pay\nroll\r\n\u2028now")).toBe("Pay roll now");
    expect(quotedProjectName("evil\u202Eexample\u200B.com\u0007")).toBe("evil example .com");
    const long = quotedProjectName("x".repeat(100));
    expect([...long]).toHaveLength(60);
    expect(long.endsWith("…")).toBe(true);
  });
});
