import { serviceNames } from "@herald/testing";
import { describe, expect, inject, it } from "vitest";

const { stack } = inject("herald");

describe("the gateway", () => {
  it("reports every service up on GET /health", async () => {
    const response = await fetch(`${stack.gatewayUrl}/health`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { status: string; services: Record<string, unknown> };
    expect(body.status).toBe("up");
    for (const name of serviceNames) {
      expect(body.services[name]).toMatchObject({ status: "up" });
    }
  });

  it("answers GET /config without authentication", async () => {
    const response = await fetch(`${stack.gatewayUrl}/config`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      signupsEnabled: true,
      oauth: { github: false, google: false },
      billing: false,
      ses: false,
      publicUrl: stack.gatewayUrl,
    });
  });

  it("answers an unknown route with 404 and the error envelope", async () => {
    const response = await fetch(`${stack.gatewayUrl}/no/such/route?x=1`, { method: "POST" });
    expect(response.status).toBe(404);
    const body = (await response.json()) as { error: { requestId: string }; timestamp: string };
    expect(body).toEqual({
      success: false,
      error: {
        code: "NOT_FOUND",
        message: "Route POST /no/such/route not found",
        statusCode: 404,
        requestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      },
      timestamp: expect.any(String),
    });
    expect(response.headers.get("x-request-id")).toBe(body.error.requestId);
    expect(Number.isNaN(Date.parse(body.timestamp))).toBe(false);
  });
});
