import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "./logger.js";
import { guardRequests } from "./request-guard.js";

const logger = createLogger({ name: "request-guard-test", level: "silent" });

describe("guardRequests", () => {
  let server: http.Server | undefined;
  afterEach(async () => {
    await new Promise((resolve) => (server?.listening ? server.close(resolve) : resolve(undefined)));
  });

  async function serve(handler: (request: http.IncomingMessage, response: http.ServerResponse) => unknown): Promise<string> {
    server = http.createServer(guardRequests(logger, "test", handler));
    await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  it("answers 500 to a handler that throws or rejects, and the server answers the next request", async () => {
    const url = await serve(async (request, response) => {
      if (request.url === "/throw") throw new Error("a bug in a handler");
      if (request.url === "/reject") return Promise.reject(new Error("a rejected promise"));
      response.end("fine");
    });
    expect((await fetch(`${url}/throw`)).status).toBe(500);
    expect((await fetch(`${url}/reject`)).status).toBe(500);
    const answer = await fetch(`${url}/ok`);
    expect(answer.status).toBe(200);
    expect(await answer.text()).toBe("fine");
  });

  it("answers 500 to a synchronous handler that throws", async () => {
    const url = await serve((request) => {
      throw new Error(`cannot handle ${request.url}`);
    });
    expect((await fetch(`${url}/any`)).status).toBe(500);
    expect((await fetch(`${url}/again`)).status).toBe(500);
  });

  it("cuts a response whose headers had gone when its handler failed", async () => {
    const url = await serve(async (_request, response) => {
      response.writeHead(200, { "content-type": "text/plain" });
      response.write("half");
      throw new Error("failed half-way");
    });
    const answer = await fetch(url);
    expect(answer.status).toBe(200);
    await expect(answer.text()).rejects.toThrow();
  });
});
